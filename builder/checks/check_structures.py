"""The structures the validator and the audit read, on a path of their own.

The generator reads a complex through ``units.AnnotationCache`` (its unit's complex and T5's
partners). The checks never touch that class or its entries: :class:`CheckStructures` reads
each complex afresh from its files (``chemistry.structure.load_complex``), then reads the same
files a second time with another parser, biotite, and compares them atom by atom
(``second_reading``: a disagreement is the complex's reading error, naming the atom), and only
then computes its annotation (``tasks.base.annotate``: screen frame, camera, H-bonds) and keeps
it in a store of its own. A wrong entry in the generator's cache gives answers the checks
recompute differently; a fault in how gemmi or our reader reads a file meets biotite's reading
of it; neither can validate itself. :class:`StructureSource` says where and how, from the
build's manifest. What stays one implementation (the pocket rule, hydrogens, typing, the H-bond
rules): docs/architecture.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..chemistry import structure
from ..core.constants import DEFAULT_IMAGE_SIZE, DEFAULT_POCKET_CUTOFF
from ..core.errors import MisiError
from ..core.records import ComplexRef
from ..store.sources import discover
from ..tasks.base import Annotation, annotate
from .second_reading import second_reading_problems

#: The H-bond mode of a manifest that names none (builds before ``--hbonds`` used ``plip``).
MANIFEST_HBONDS_DEFAULT = "plip"


class CheckStructures:
    """The annotations of the complexes one check job reads, each read once from its files by
    the checks' own path (not the generator's cache). ``get`` raises the complex's reading error
    (a :class:`MisiError`) every time it is asked for a complex that cannot be read."""

    def __init__(
        self, refs: dict[str, ComplexRef], pocket_cutoff: float, image_size: int, hbonds: str
    ):
        self.refs = dict(refs)
        self.pocket_cutoff, self.image_size, self.hbonds = (
            float(pocket_cutoff),
            int(image_size),
            hbonds,
        )
        self._read: dict[str, Annotation] = {}
        self._failed: dict[str, MisiError] = {}

    def get(self, pdb_id: str) -> Annotation:
        if pdb_id in self._failed:
            raise self._failed[pdb_id]
        if pdb_id not in self._read:
            try:
                if pdb_id not in self.refs:
                    raise MisiError(f"complex {pdb_id} is not in the structure source")
                ref = self.refs[pdb_id]
                cx = structure.load_complex(ref, pocket_cutoff=self.pocket_cutoff)
                second = second_reading_problems(ref, cx)
                if second.problems:
                    raise MisiError(
                        f"complex {pdb_id}: the second reading (biotite) disagrees with the "
                        f"generator's in {len(second.problems)} atom(s): "
                        + " | ".join(second.problems[:3])
                    )
                self._read[pdb_id] = annotate(cx, self.image_size, self.hbonds)
            except MisiError as exc:
                self._failed[pdb_id] = exc
                raise
        return self._read[pdb_id]


@dataclass(frozen=True)
class StructureSource:
    """Where and how the checks re-read a build's structures: its source and entries folder,
    and the build's pocket cutoff, image size and H-bond mode (from its manifest)."""

    source: str | None
    structures: str | None = None
    pocket_cutoff: float = DEFAULT_POCKET_CUTOFF
    hbonds: str = MANIFEST_HBONDS_DEFAULT
    image_size: int = DEFAULT_IMAGE_SIZE

    @classmethod
    def of(
        cls, manifest: dict, source: str | None = None, structures: str | None = None
    ) -> StructureSource:
        """The structures of the build ``manifest`` describes (``source``/``structures``: read
        them from there instead)."""
        config = manifest["config"]
        return cls(
            source or manifest.get("source") or config.get("source"),
            structures or manifest.get("structures"),
            float(config.get("pocket_cutoff", DEFAULT_POCKET_CUTOFF)),
            config.get("hbonds", MANIFEST_HBONDS_DEFAULT),
            int(config.get("image_size", DEFAULT_IMAGE_SIZE)),
        )

    def refs(self) -> dict[str, ComplexRef]:
        """The complexes of the source, by PDB id."""
        return {r.pdb_id: r for r in discover(self.source, self.structures)}

    def annotations(self, refs: dict | None = None) -> CheckStructures:
        """A fresh store of the complexes' annotations (``refs``: already discovered ones)."""
        return CheckStructures(
            self.refs() if refs is None else refs, self.pocket_cutoff, self.image_size, self.hbonds
        )
