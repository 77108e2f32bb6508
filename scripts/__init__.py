"""PerfCard's Python scripts, one package run from the repository root with Debian's Python:

    /usr/bin/python3 -m scripts.<folder>.<module> [options]

    paths.py      every path the scripts use (repository, build, CLI, zoo, ../shared/data/public)
    checks/       checks that print figures: device catalog, inferred shapes, the torchvision zoo
    calibration/  fits the roofline constants (weights/roofline.json) and writes docs/accuracy.md
    roofline/     the rows and queries calibration and evaluation share; HELP's Kendall tau
    data/         loaders of the public measurements and the training tables
    zoo/          the model zoo's generators, manifests and their checks
    measure/      our own onnxruntime-node / onnxruntime-web measurement campaigns
    fixtures/     generators of committed test files and of the benchmark's large models
    weights/      the PCWT weights-file format and weights/manifest.json

Tests are test_*.py beside the code; scripts/test.sh runs them all with
``/usr/bin/python3 -m unittest discover -s scripts -p 'test_*.py' -t .``.
"""
