"""The model zoo: graph-only exports and generators, their committed manifests and checks (README.md)."""
