"""Apache Spark as an engine for the spark-* workloads (seed 003 at scale).

- `master`: where Spark runs (embedded `local[*]` or a cluster's master URL, recorded by kind only) and whether it
  can start here; imports neither pyspark nor a framework, so the CLI and the planner use it;
- `inference`: spark-inference, batch inference over a DataFrame with `predict_batch_udf`;
- `streaming`: spark-streaming, Structured Streaming with exactly-once output and a ladder of offered rates;
- `predict`: the one thing these ask of a framework, its predict function (PyTorch's: runner.frameworks.torch.predict).
"""
