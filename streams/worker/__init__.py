"""The Faust worker: the app and its views (`app`, `web`), the input (`ingest`), the stages' agents
(`agents`) and what keeps them exact and fast (`batching`, `continuity`, `outputs`, `store`)."""
