"""Chemistry layer: reading complexes, typing donors/acceptors, detecting hydrogen bonds.

Owns: ``structure`` (the entry points: PDBbind folders and raw PDB/mmCIF entries into one
``Complex``), built from ``files`` (input files, element symbols, MOL2 records, distance bonds),
``protein`` (gemmi reading, pocket cut, residue labels), ``ligand`` (SDF/MOL2 via RDKit) and
``ccd`` (chemical component dictionary templates); ``hbond_typing`` (donors and acceptors) and
``hbonds`` (the geometric H-bond detector); ``samples`` (the embedded real complexes).
May import: ``builder.core``; never the scene, tasks, dataset, scoring or CLI layers.
"""
