"""Peak memory and time of issue 39's hostile inputs, each read by today's code and by the
reference (the unbounded read the code did before: whole-file gzip, a whole-sheet XML parse, a
whole-file predictions read), in child processes under an address-space cap, so a bomb fails
at the cap instead of taking the machine. Prints one line per input: peak RSS (MB), seconds,
outcome. (The human app's connection cap is held by ``tests/test_human_limits.py``.)

    python -m scripts.bench_bombs [--cap-gb 3] [--gzip-gb 6] [--quick]

``--quick`` uses inputs ten times smaller (for a busy machine); the ratios hold.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib
from pathlib import Path

_NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
_R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"

# what each child runs: (name, code); the code reads sys.argv[1] and prints its outcome
CHILDREN = {
    "gzip-reference": "import gzip,sys; gzip.decompress(open(sys.argv[1],'rb').read()); print('read whole')",
    "gzip-now": (
        "import sys; from pathlib import Path\n"
        "from misi_bench.builder.chemistry.files import open_text\n"
        "try: open_text(Path(sys.argv[1])); print('read')\n"
        "except Exception as e: print('refused:', e)"
    ),
    "xlsx-reference": (
        "import sys, zipfile; from xml.etree import ElementTree\n"
        "b = zipfile.ZipFile(sys.argv[1]); ElementTree.fromstring(b.read('xl/worksheets/sheet1.xml'))\n"
        "print('parsed whole')"
    ),
    "xlsx-now": (
        "import sys; from misi_bench.builder.scoring import read_predictions\n"
        "try: read_predictions(sys.argv[1]); print('read')\n"
        "except Exception as e: print('refused:', e)"
    ),
    "predictions-reference": (
        "import sys, json\n"
        "text = open(sys.argv[1], 'rb').read().decode('utf-8', 'replace')\n"
        "preds = {}\n"
        "for line in text.splitlines():\n"
        "    item = json.loads(line); preds[item['id']] = item['prediction']\n"
        "print(len(preds), 'entries kept')"
    ),
    "predictions-now": (
        "import sys; from misi_bench.builder.scoring import read_predictions\n"
        "try: print(len(read_predictions(sys.argv[1]).predictions), 'entries kept')\n"
        "except Exception as e: print('refused:', e)"
    ),
    "reply-reference": "import json,sys; json.loads(open(sys.argv[1]).read()); print('parsed')",
    "reply-now": (
        "import json, sys\n"
        "from misi_bench.eval_plugins.api.client import MAX_REPLY_DEPTH, too_deep\n"
        "try: raw = json.loads(open(sys.argv[1]).read())\n"
        "except RecursionError: print('malformed: RecursionError caught, question given up'); sys.exit()\n"
        "print('malformed' if too_deep(raw, MAX_REPLY_DEPTH) else 'kept')"
    ),
}


def run_child(kind: str, path: Path, cap: int) -> tuple[float, float, str]:
    """(peak RSS MB, seconds, last output line) of one child under an address-space cap."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILDREN[kind], str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        preexec_fn=limit,
        env={**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", os.getcwd())},
    )
    out = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    lines = [ln for ln in out.strip().splitlines() if ln.strip()]
    last = lines[-1] if lines else f"exit {proc.returncode}"
    return usage.ru_maxrss / 1024, seconds, last[:150]


def make_gzip_bomb(path: Path, unpacked: int) -> None:
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = (b"REMARK 999 padding" + b" " * 61 + b"\n") * (1 << 16)
    with open(path, "wb") as fh:
        fh.write(comp.compress(b"ATOM      1  N   ALA A   1       0.000   0.000   0.000\n"))
        for _ in range(unpacked // len(block)):
            fh.write(comp.compress(block))
        fh.write(comp.flush())


def make_xlsx_bomb(path: Path, cells: int) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as book:
        book.writestr(
            "xl/workbook.xml",
            f'<workbook {_NS} xmlns:r="{_R}"><sheets><sheet name="s" sheetId="1" r:id="rId1"/>'
            "</sheets></workbook>",
        )
        book.writestr(
            "xl/_rels/workbook.xml.rels",
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId1" Target="worksheets/sheet1.xml" Type="x"/></Relationships>',
        )
        with book.open("xl/worksheets/sheet1.xml", "w") as fh:
            fh.write(f"<worksheet {_NS}><sheetData><row>".encode())
            chunk = b"<c/>" * (1 << 18)
            for _ in range(cells // (1 << 18)):
                fh.write(chunk)
            fh.write(b"</row></sheetData></worksheet>")


def make_predictions(path: Path, size: int) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        i = written = 0
        while written < size:
            line = json.dumps({"id": f"unknown-{i:09d}", "prediction": "A"}) + "\n"
            fh.write(line)
            written += len(line)
            i += 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--cap-gb", type=float, default=3.0, help="address-space cap per child")
    parser.add_argument("--gzip-gb", type=float, default=6.0, help="what the gzip bomb unpacks to")
    parser.add_argument("--quick", action="store_true", help="inputs ten times smaller")
    parser.add_argument(
        "--only",
        nargs="+",
        choices=("gzip", "xlsx", "predictions", "reply"),
        help="measure only these inputs",
    )
    args = parser.parse_args(argv)
    cap = int(args.cap_gb * 1024**3)
    scale = 10 if args.quick else 1
    with tempfile.TemporaryDirectory(prefix="bench-bombs-") as tmp:
        tmp = Path(tmp)
        inputs = {
            "gzip": (
                tmp / "pocket.pdb",
                lambda p: make_gzip_bomb(p, int(args.gzip_gb * 1024**3) // scale),
            ),
            "xlsx": (tmp / "bomb.xlsx", lambda p: make_xlsx_bomb(p, 62_000_000 // scale)),
            "predictions": (tmp / "preds.jsonl", lambda p: make_predictions(p, (1 << 30) // scale)),
            "reply": (tmp / "reply.json", lambda p: p.write_text("[" * 200_000)),
        }
        for name, (path, make) in inputs.items():
            if args.only and name not in args.only:
                continue
            t0 = time.perf_counter()
            make(path)
            print(
                f"{name}: input of {path.stat().st_size:,} bytes (made in {time.perf_counter() - t0:.1f} s)"
            )
            for kind in ("reference", "now"):
                rss, seconds, last = run_child(f"{name}-{kind}", path, cap)
                print(f"  {kind:9s} peak {rss:8.0f} MB  {seconds:6.2f} s  {last}")
            path.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
