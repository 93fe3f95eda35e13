"""MiSI-Bench builder: structures, hydrogen bonds, geometry, rendering, tasks, dataset writing."""
