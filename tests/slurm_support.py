"""A real single-node Slurm cluster for the tests: munged, slurmctld and slurmd (Debian's
``munge`` and ``slurm-wlm``, installed by .ci/run) started as root in the foreground with a minimal
configuration in a temporary folder (own munge key and socket, own ports, no systemd, no
cgroups, no accounting). Every wait is bounded; ``stop`` ends the daemons it started."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

TERMINAL = {
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "TIMEOUT",
    "NODE_FAIL",
    "OUT_OF_MEMORY",
    "PREEMPTED",
    "BOOT_FAIL",
    "DEADLINE",
}

_CONF = """\
ClusterName=misitest
SlurmctldHost={host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={root}/munge/munge.socket
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/log/slurmctld.log
SlurmdLogFile={root}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MinJobAge=900
MaxArraySize=1000
NodeName={host} NodeAddr=127.0.0.1 {hardware} State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


def missing_programs() -> list[str]:
    return [
        p
        for p in ("munged", "slurmctld", "slurmd", "sbatch", "scontrol", "sinfo")
        if shutil.which(p) is None
    ]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SlurmCluster:
    """One node (this machine, its real CPUs and memory from ``slurmd -C``) and one partition."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.procs: list[subprocess.Popen] = []
        self.conf = self.root / "slurm.conf"
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}

    # -------------------------------------------------------------- daemons
    def start(self, timeout: float = 90) -> SlurmCluster:
        for d in ("munge", "state", "spool", "log"):
            (self.root / d).mkdir(parents=True, exist_ok=True)
        (self.root / "munge").chmod(0o755)
        key = self.root / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        hardware = subprocess.run(
            ["slurmd", "-C"], capture_output=True, text=True, timeout=30, check=True
        ).stdout
        line = next(ln for ln in hardware.splitlines() if ln.startswith("NodeName="))
        host, fields = line.split()[0].split("=", 1)[1], " ".join(line.split()[1:])
        self.cpus = int(re.search(r"CPUs=(\d+)", fields).group(1))
        self.conf.write_text(
            _CONF.format(
                host=host,
                root=self.root,
                hardware=fields,
                ctld_port=_free_port(),
                d_port=_free_port(),
            ),
            encoding="utf-8",
        )
        m = self.root / "munge"
        self._spawn(
            "munged",
            [
                "munged",
                "--foreground",
                "--force",
                f"--socket={m}/munge.socket",
                f"--key-file={key}",
                f"--pid-file={m}/munged.pid",
                f"--seed-file={m}/munged.seed",
                f"--log-file={self.root}/log/munged.log",
            ],
        )
        self._wait(lambda: (m / "munge.socket").exists(), 20, "munged socket")
        self._spawn("slurmctld", ["slurmctld", "-D", "-c", "-i", "-f", str(self.conf)])
        self._wait(
            lambda: self._ok(["scontrol", "ping"]) and "UP" in self._out(["scontrol", "ping"]),
            timeout,
            "slurmctld",
        )
        self._spawn("slurmd", ["slurmd", "-D", "-f", str(self.conf)])
        self._wait(
            lambda: self._out(["sinfo", "-h", "-o", "%T"]).strip() == "idle",
            timeout,
            "an idle node",
        )
        return self

    def _spawn(self, name: str, cmd: list[str]) -> None:
        with open(self.root / "log" / f"{name}.stdout", "wb") as log:
            self.procs.append(
                subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=self.env)
            )

    def stop(self) -> None:
        """Cancel the cluster's jobs (so no job step outlives slurmd), then terminate the daemons
        this object started (slurmd, slurmctld, munged); every wait bounded."""
        if self.procs and all(p.poll() is None for p in self.procs):
            self._ok(["scancel", "--user=root"])
            end = time.monotonic() + 60
            while (
                self._out(["squeue", "-h", "-t", "running,completing"]).strip()
                and time.monotonic() < end
            ):
                time.sleep(0.5)
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=10)
        self.procs.clear()

    def logs(self) -> str:
        """The daemons' log tails (for failure messages)."""
        parts = []
        for path in sorted((self.root / "log").glob("*")):
            parts.append(
                f"== {path.name}\n" + "\n".join(path.read_text(errors="replace").splitlines()[-15:])
            )
        return "\n".join(parts)

    def _wait(self, ready, timeout: float, what: str) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            dead = [p.args[0] for p in self.procs if p.poll() is not None]
            if dead:
                raise RuntimeError(f"{dead} exited while waiting for {what}\n{self.logs()}")
            if ready():
                return
            time.sleep(0.5)
        raise TimeoutError(f"no {what} after {timeout} s\n{self.logs()}")

    # -------------------------------------------------------------- commands and jobs
    def _out(self, cmd: list[str]) -> str:
        return subprocess.run(cmd, capture_output=True, text=True, env=self.env, timeout=60).stdout

    def _ok(self, cmd: list[str]) -> bool:
        return (
            subprocess.run(cmd, capture_output=True, text=True, env=self.env, timeout=60).returncode
            == 0
        )

    def run(
        self, cmd: list[str], cwd: Path | None = None, env: dict | None = None, check: bool = True
    ) -> subprocess.CompletedProcess:
        proc = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            cwd=cwd,
            env={**self.env, **(env or {})},
            timeout=120,
        )
        if check and proc.returncode != 0:
            raise RuntimeError(
                f"{cmd} exited {proc.returncode}: {proc.stdout}\n{proc.stderr}\n{self.logs()}"
            )
        return proc

    def job_states(self, job_id: str) -> dict[str, str]:
        """``JobId`` (``A_I`` for array tasks) -> ``JobState`` of every record of ``job_id``."""
        text = self._out(["scontrol", "-o", "show", "job", job_id])
        states = {}
        for line in text.splitlines():
            fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
            if "JobState" not in fields:
                continue
            key = fields["JobId"]
            if fields.get("ArrayTaskId"):
                key = f"{fields['ArrayJobId']}_{fields['ArrayTaskId']}"
            states[key] = fields["JobState"]
        return states

    def wait_state(self, job_id: str, state: str, timeout: float) -> None:
        """Wait (at most ``timeout`` s) until the record ``job_id`` (``A_I`` for an array task) is in ``state``."""
        end = time.monotonic() + timeout
        while self.job_states(job_id.split("_")[0]).get(job_id) != state:
            if time.monotonic() > end:
                raise TimeoutError(f"job {job_id} not {state} after {timeout} s\n{self.logs()}")
            time.sleep(0.2)

    def wait_jobs(self, job_ids: list[str], timeout: float) -> dict[str, str]:
        """Wait (at most ``timeout`` s) until every record of ``job_ids`` is in a terminal state."""
        end = time.monotonic() + timeout
        while True:
            states = {k: v for j in job_ids for k, v in self.job_states(j).items()}
            if states and all(s in TERMINAL for s in states.values()):
                return states
            if time.monotonic() > end:
                raise TimeoutError(
                    f"jobs {job_ids} not finished after {timeout} s: {states}\n{self.logs()}"
                )
            time.sleep(1)
