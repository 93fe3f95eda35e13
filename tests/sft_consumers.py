"""Side virtual environments for the SFT consumers whose pins clash with the main environment.

LLaMA-Factory and ms-swift pin older ``transformers``/``datasets``/``trl``/``peft`` than the
evaluation harnesses installed beside MiSI-Bench, so their own dataset loaders run in separate
venvs. Each side venv is layered on the running interpreter's environment through a ``.pth``
file appended *after* its own site-packages: its pinned packages shadow the main ones, while
torch (large, and pinned by the project) comes from the main environment and is never
reinstalled. Location: ``$MISI_SFT_VENVS`` (default ``~/.cache/misi-bench/sft-venvs``).

``python tests/sft_consumers.py`` creates them all (CI does this before the tests, so pip's
output lands in the CI log); the tests call :func:`consumer_python`, which creates a missing one
the same way (package registry only; nothing else is downloaded).
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

#: Side venv name -> pip requirements (pinned: the tests read these packages' private modules).
CONSUMERS: dict[str, tuple[str, ...]] = {
    "llamafactory": ("llamafactory==0.9.5",),
    "ms-swift": ("ms-swift==4.6.0",),
}
#: Pins passed to every side install so that pip keeps the main environment's torch.
TORCH_PINS = ("torch==2.13.0", "torchvision==0.28.0")


def venv_root() -> Path:
    return Path(
        os.environ.get("MISI_SFT_VENVS") or Path.home() / ".cache" / "misi-bench" / "sft-venvs"
    )


def _python_of(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _site_packages(python: Path) -> str:
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    return subprocess.run(
        [str(python), "-c", code], check=True, capture_output=True, text=True
    ).stdout.strip()


def consumer_python(name: str) -> Path:
    """The interpreter of side venv ``name`` (created with its requirements if missing)."""
    venv = venv_root() / name
    python = _python_of(venv)
    stamp = venv / "misi-requirements.txt"
    wanted = "\n".join(CONSUMERS[name])
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    base = sysconfig.get_paths()["purelib"]
    Path(_site_packages(python), "_misi_base_env.pth").write_text(
        f"import site; site.addsitedir({base!r})\n"
    )
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            *CONSUMERS[name],
            *TORCH_PINS,
        ],
        check=True,
    )
    stamp.write_text(wanted)
    return python


if __name__ == "__main__":
    for consumer in CONSUMERS:
        print(consumer, consumer_python(consumer))
