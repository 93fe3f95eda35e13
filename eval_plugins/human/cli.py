def add_commands(sub) -> None:
    pass
