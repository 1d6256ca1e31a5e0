"""Process machinery: BLAS threads, heap trimming, the collector, generator drivers, tracing, ONNX sessions."""
