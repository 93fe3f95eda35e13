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
#: LLaMA-Factory's transformers (5.6) imports ``kernels`` whenever it can and builds its layer
#: table with the API of kernels 0.12 (``transformers[kernels]`` pins ``>=0.12,<0.13``); newer
#: kernels, which the main environment may hold, refuse that table at import time
#: ("Either a revision or a version must be specified"), so the side venv keeps its own.
CONSUMERS: dict[str, tuple[str, ...]] = {
    "llamafactory": ("llamafactory==0.9.5", "kernels>=0.12,<0.13"),
    "ms-swift": ("ms-swift==4.6.0",),
}


def torch_pins() -> tuple[str, ...]:
    """Pins of the main environment's own torch and torchvision, passed to every side install.

    Read from the running interpreter, never written down twice: a side venv pinned to another
    torch than its base gets pip to install a second torch into it, which then shadows the base
    and imports without the base's dependencies.
    """
    from importlib.metadata import PackageNotFoundError, version

    pins = []
    for dist in ("torch", "torchvision"):
        try:
            pins.append(f"{dist}=={version(dist)}")
        except PackageNotFoundError:
            continue
    return tuple(pins)


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


def _pip_install(python: Path, requirements: tuple[str, ...]) -> None:
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *requirements],
        check=True,
    )


def consumer_python(name: str) -> Path:
    """The interpreter of side venv ``name``, layered on the running environment.

    The venv is kept between runs (``misi-requirements.txt`` records what it was built with).
    Its ``.pth`` always points at the running interpreter's site-packages: CI builds the main
    environment in a fresh scratch folder each run, so a kept venv must follow it. Same
    requirements and torch, another base: the pointer is rewritten and pip fills in what the new
    base lacks. Other requirements or another torch: the venv is built again from empty.
    """
    venv = venv_root() / name
    python = _python_of(venv)
    stamp = venv / "misi-requirements.txt"
    requirements = (*CONSUMERS[name], *torch_pins())
    base = sysconfig.get_paths()["purelib"]
    wanted = "\n".join(requirements)
    built_for = stamp.read_text().split("\n# base: ") if stamp.exists() else [None, None]
    if not (python.exists() and built_for[0] == wanted):
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        built_for = [None, None]
    if built_for[-1] != base:
        Path(_site_packages(python), "_misi_base_env.pth").write_text(
            f"import site; site.addsitedir({base!r})\n"
        )
        _pip_install(python, requirements)
        stamp.write_text(f"{wanted}\n# base: {base}")
    return python


if __name__ == "__main__":
    for consumer in CONSUMERS:
        print(consumer, consumer_python(consumer))
