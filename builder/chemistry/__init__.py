"""Chemistry layer: reading complexes, typing donors/acceptors, detecting hydrogen bonds.

Owns: ``structure`` (PDBbind folders and raw PDB/mmCIF entries via gemmi and RDKit into one
``Complex``), ``hbonds`` (the geometric H-bond detector), ``samples`` (the embedded real
complexes). May import: ``builder.core``; never the scene, tasks, dataset, scoring or CLI layers.
"""
