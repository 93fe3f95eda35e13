"""``misi-bench eval``: evaluate an OpenAI-compatible chat-completions endpoint, no harness needed.

Owns: reading question rows (:mod:`.data`) and their Hub revision (:mod:`.hub`), the async HTTP
client with retries (:mod:`.client`), the resumable run folder (:mod:`.store`), the concurrent
runner and its report (:mod:`.runner`),
the redaction of the key and the URL's credentials (:mod:`.redact`), the command (:mod:`.cli`),
a local protocol double of the endpoint for tests and the benchmark (:mod:`.testing_server`),
the stand-in model ``misi-bench serve-mock`` built on it (:mod:`.mock`); the benchmark
script is ``python -m scripts.bench_api`` (outside the wheel).
May import: :mod:`misi_bench.builder.scoring` (the one scorer), :mod:`misi_bench.builder.core`,
:mod:`misi_bench.eval_plugins.common`, ``httpx``, ``datasets``/pyarrow, tqdm, numpy (the
mock's random answers), Pillow; never builder chemistry/scene/tasks/dataset code and never
torch. Nothing is imported here.
"""
