"""Engines: systems that run a framework's model for a workload and own the loop (a Spark session, a streaming
query). An engine calls a framework only through a small interface (`runner.engines.spark.predict`), so another
framework can plug in."""
