"""Our own measurements (data/measured/): onnxruntime-node and onnxruntime-web campaigns."""
