"""Chemistry layer: reading complexes, typing donors/acceptors, detecting hydrogen bonds.

Owns: ``structure`` (the entry points: PDBbind folders and raw PDB/mmCIF entries into one
``Complex``), built from ``files`` (input files, element symbols, MOL2 records, distance bonds),
``protein`` (gemmi reading, pocket cut, residue labels), ``ligand`` (SDF/MOL2 via RDKit) and
``ccd`` (chemical component dictionary templates); ``hbonds`` (the geometric H-bond detector,
modes ``chimerax`` and ``plip``) with ``hbond_typing`` (the plip mode's donors and acceptors) and,
for the chimerax mode, ``idatm`` (IDATM-style atom types), ``hbond_graph`` (atoms, hydrogens),
``hbond_classes`` (Mills & Dean classes), ``hbond_limits`` (their limits) and ``mills_dean``
(their geometric tests); ``hbond_rotamers`` (bonds that depend on a modelled rotor hydrogen);
``samples`` (the embedded real complexes).
May import: ``builder.core``; never the scene, tasks, dataset, scoring or CLI layers.
"""
