"""Constants that several layers share, each defined once.

* ``PACKAGE_VERSION``: the version of the ``misi-bench`` distribution (also in pyproject.toml;
  a test keeps the two equal).
* ``BUILDER_VERSION``: keys every build (config hash, row metadata, manifest); bump it when the
  same inputs and seed would give different rows.
* :func:`version_label`: the one way the versions are shown (``--version``, card, manifest):
  the package, the builder and the prompt templates, each named as such.
* ``DEFAULT_HUB_REPO``: the canonical Hub repository of the published benchmark, overridable by
  ``$MISI_BENCH_REPO`` (and ``$MISI_BENCH_REVISION`` for a tag or branch) and by command-line
  options; the evaluation plugins read their data location through :func:`hub_repo_id`.
* ``DEFAULT_IMAGE_SIZE``: square image side in pixels (docs/spec.md section 4), with its allowed range
  (:func:`check_image_size`, the one range check). ``REFERENCE_IMAGE_SIZE``: the image size at
  which pixel quantities (label font size, option image-difference thresholds) are given; they
  scale with ``size / REFERENCE_IMAGE_SIZE``.
* ``DEFAULT_POCKET_CUTOFF``: the pocket radius (Å): whole amino-acid residues (standard or kept
  modified) with a heavy atom within it of a ligand heavy atom (the reader's default,
  ``--pocket-cutoff``, and the value of a manifest that records none).
"""

from __future__ import annotations

import os

PACKAGE_VERSION = "0.1.0"
BUILDER_VERSION = "0.8.0"


def version_label(
    package: str = PACKAGE_VERSION, builder: str = BUILDER_VERSION, templates: str | None = None
) -> str:
    """``misi-bench 0.1.0, builder 0.6.0, templates paper-1.0.0``: the versions, each labelled
    (the templates part only when given)."""
    parts = [f"misi-bench {package}", f"builder {builder}"]
    if templates:
        parts.append(f"templates {templates}")
    return ", ".join(parts)


DEFAULT_HUB_REPO = "misi-bench/misi-bench"
REPO_ENV = "MISI_BENCH_REPO"
REVISION_ENV = "MISI_BENCH_REVISION"

DEFAULT_IMAGE_SIZE = 512
MIN_IMAGE_SIZE = 16
MAX_IMAGE_SIZE = 4096
REFERENCE_IMAGE_SIZE = 512

DEFAULT_POCKET_CUTOFF = 10.0
#: H-bond detection modes (``chemistry.hbonds``), here so that the command line names them
#: without importing the chemistry stack (RDKit, gemmi: most of a second).
HBOND_MODES = ("chimerax", "plip")
DEFAULT_HBOND_MODE = "chimerax"


def hub_repo_id() -> str:
    """Dataset location used by the evaluation plugins: ``$MISI_BENCH_REPO`` or the canonical repo."""
    return os.environ.get(REPO_ENV) or DEFAULT_HUB_REPO


def hub_revision() -> str | None:
    """The dataset revision (tag or branch) from ``$MISI_BENCH_REVISION``, or None for the default."""
    return os.environ.get(REVISION_ENV) or None


def check_image_size(size: object) -> int:
    """The image size as an int; ``ValueError`` outside MIN_IMAGE_SIZE..MAX_IMAGE_SIZE px."""
    if isinstance(size, bool) or not isinstance(size, (int, float)) or int(size) != size:
        raise ValueError(f"image size must be an integer number of pixels, got {size!r}")
    if not MIN_IMAGE_SIZE <= int(size) <= MAX_IMAGE_SIZE:
        raise ValueError(f"image size must be {MIN_IMAGE_SIZE}..{MAX_IMAGE_SIZE} px, got {size}")
    return int(size)
