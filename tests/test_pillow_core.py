"""Pillow's private core objects are reached only through ``builder/scene/pillow_core.py``, behind
a fallback to the public API that draws the same bytes; the supported Pillow range is checked with
a clear message; a build's manifest records the Pillow and libdeflate (``deflate``) releases."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from misi_bench.builder.core.errors import RenderError
from misi_bench.builder.scene import pillow_core

ROOT = Path(__file__).resolve().parent.parent

#: Renders one sample's pocket in the six views (one by one, ``render_png``) and the same
#: pictures as moved poses batched on sheets (``render_stack``, the audit's path); prints the
#: sha256 of every PNG and sheet, and whether the core objects were used.
_CHILD = """
import hashlib, json
from misi_bench.builder.chemistry.samples import sample_refs
from misi_bench.builder.chemistry.structure import load_complex
from misi_bench.builder.operations.language import Move, Roll
from misi_bench.builder.operations.transforms import VIEW_NAMES
from misi_bench.builder.scene import pillow_core
from misi_bench.builder.scene.batch import render_stack
from misi_bench.builder.scene.cache import render_png
from misi_bench.builder.scene.camera import fit_camera
from misi_bench.builder.scene.requests import RenderRequest

cx = load_complex(sample_refs()[0])
camera = fit_camera(cx.screen_coords, size=160)
atoms = tuple(range(cx.n_atoms))
lig = tuple(int(i) for i in cx.ligand_indices)
views = [RenderRequest(atoms=atoms, camera=camera, view=v) for v in VIEW_NAMES]
poses = [
    RenderRequest(atoms=atoms, camera=camera, view="front", groups=((lig, ops),))
    for ops in ((Move("x", 3),), (Roll("y", 45),), (Roll("z", -30), Move("x", -4)))
]
out = [hashlib.sha256(render_png(cx, r)).hexdigest() for r in views + poses]
for sheet in render_stack(cx, poses):
    out.append(hashlib.sha256(sheet.image.tobytes()).hexdigest())
print(json.dumps({"core": pillow_core.use_core(), "hashes": out}))
"""


def _render(public: bool) -> dict:
    env = {**os.environ, pillow_core.PUBLIC_ENV: "1" if public else "0"}
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD], capture_output=True, text=True, env=env, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_public_fallback_draws_the_same_bytes():
    fast, public = _render(public=False), _render(public=True)
    assert fast["core"] is True and public["core"] is False
    assert len(fast["hashes"]) >= 10
    assert fast["hashes"] == public["hashes"]


def _private_uses(source: str) -> list[int]:
    """Lines that read ``.im`` or ``.draw`` (Pillow's core image and core drawer)."""
    return sorted(
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute) and node.attr in ("im", "draw")
    )


def test_only_pillow_core_touches_pillow_private_objects():
    found = []
    for top in ("builder", "eval_plugins"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if path.name == "pillow_core.py" or "__pycache__" in path.parts:
                continue
            found += [f"{path.relative_to(ROOT)}:{n}" for n in _private_uses(path.read_text())]
    assert not found, f"Pillow core objects outside builder/scene/pillow_core.py: {found}"
    assert _private_uses("x = image.im\ny = ImageDraw.Draw(image).draw.draw_ink\n") == [1, 2]


@pytest.mark.parametrize("version", ["10.1.0", "11.3.0", "13.0.0", "13.2.1.dev0"])
def test_supported_pillow_releases_pass(version):
    pillow_core.check_pillow(version)


@pytest.mark.parametrize("version", ["9.5.0", "10.0.1", "14.0.0", "15.1"])
def test_unsupported_pillow_release_is_refused_with_what_to_install(version):
    with pytest.raises(RenderError, match=f"Pillow {version} is outside the supported range"):
        pillow_core.check_pillow(version)


def test_the_pin_of_pyproject_is_the_checked_range():
    text = (ROOT / "pyproject.toml").read_text()
    (low_major, low_minor), (high_major, high_minor) = pillow_core.SUPPORTED_PILLOW
    assert f'"pillow>={low_major}.{low_minor},<{high_major}"' in text or (
        f'"pillow>={low_major}.{low_minor},<{high_major}.{high_minor}"' in text
    )
    import PIL

    pillow_core.check_pillow(PIL.__version__)  # the installed release is a supported one


def test_image_library_versions():
    import deflate
    import PIL

    assert pillow_core.image_library_versions() == {
        "pillow": PIL.__version__,
        "deflate": deflate.__version__,
    }


def test_manifest_records_the_image_libraries(data_dir):
    manifest = json.loads((Path(data_dir) / "manifest.json").read_text())
    assert manifest["image_libraries"] == pillow_core.image_library_versions()
