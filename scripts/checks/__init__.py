"""Checks that print figures: the device catalog, inferred shapes against ONNX, the torchvision zoo."""
