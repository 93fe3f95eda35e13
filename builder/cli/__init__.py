"""The builder's command line (``misi-bench inspect|render|preview|build|slurm-script|validate|score|push``).

May import every builder layer; never the facade or ``eval_plugins``. The facade's ``main``
joins these commands with the evaluation front-ends' commands.
"""
