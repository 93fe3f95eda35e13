"""The dataset card's hand-written parts (template, licence, citation, notes), read as files."""

if __name__ == "dataset_card":  # the checkout root on sys.path (editable install, or run from it)
    raise ImportError(
        "import dataset_card as misi_bench.dataset_card: the top-level name 'dataset_card' would load second "
        "copies of its modules and classes (a MisiError that misi_bench's except clauses miss)"
    )
