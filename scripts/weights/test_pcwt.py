"""Tests of pcwt.py and update_manifest.py:  /usr/bin/python3 -m scripts.weights.test_pcwt
(The C++ side reads the files pcwt.py writes in tests/weights_file_test.cpp.)"""
import os
import struct
import subprocess
import sys
import tempfile
import unittest

import numpy as np

from scripts import paths
from scripts.weights import pcwt

FIXTURES = os.path.join(paths.TEST_DATA, "weights")

META = {"predictor": "t", "predictor.version": 1, "feature_schema.hash": "sha256:00",
        "training.provenance": "test", "training.sources": ["none"], "training.commit": "0",
        "training.date": "2025-01-01", "created_by": "test_pcwt.py"}


def error(data):
    try:
        pcwt.read_bytes(data)
    except pcwt.PcwtError as e:
        return e.message, e.offset
    return None


class RoundTrip(unittest.TestCase):
    def test_every_dtype(self):
        rng = np.random.default_rng(0)
        x = rng.standard_normal((3, 64)).astype(np.float32)
        tensors = {"f32": x, "f16": x.astype(np.float16), "f64": x.astype(np.float64),
                   "i8": np.array([-1, 2], np.int8), "u8": np.array([255], np.uint8),
                   "i32": np.array([[7]], np.int32), "i64": np.array([-(2 ** 63)], np.int64),
                   "bf16": pcwt.BF16(x), "q8": pcwt.Q8_0(x), "q4": pcwt.Q4_0(x)}
        meta = dict(META, extra=[1.5, 2.5], flag=False, empty=pcwt.Array("int64", []))
        w = pcwt.read_bytes(pcwt.write_bytes(meta, tensors))
        self.assertEqual(w.metadata["extra"], [1.5, 2.5])
        self.assertEqual(w.metadata_types["empty"], "array<int64>")
        self.assertIs(w.metadata["flag"], False)
        np.testing.assert_array_equal(w.tensors["f32"].numpy(), x)
        np.testing.assert_array_equal(w.tensors["i64"].numpy(), tensors["i64"])
        for t in w.tensors.values():
            self.assertEqual(t.offset % 64, 0)
        q8 = w.tensors["q8"].to_f32()
        d = w.tensors["q8"].numpy()[..., 0:2].copy().view("<f2").astype(np.float32)  # [3, 2, 1]
        self.assertTrue(np.all(np.abs(q8 - x).reshape(3, 2, 32) <= d / 2))
        self.assertLess(np.max(np.abs(w.tensors["bf16"].to_f32() - x) / np.abs(x)), 2.0 ** -8)

    def test_q8_0_matches_the_specified_formula(self):
        rng = np.random.default_rng(1)
        x = (rng.standard_normal(32 * 50) * rng.uniform(1e-6, 1e3, 32 * 50)).astype(np.float32)
        x[:32] = 0
        blocks = pcwt.quantize_q8_0(x)
        for b in range(50):
            v = x[32 * b:32 * b + 32]
            amax = np.float32(np.max(np.abs(v)))
            d = np.float32(np.float16(np.float32(amax / np.float32(127))))
            expect = [0] * 32 if d == 0 else [int(np.clip(np.rint(np.float32(t / d)), -127, 127)) for t in v]
            self.assertEqual(blocks[b, 0:2].tobytes(), np.float16(d).tobytes())
            self.assertEqual(list(blocks[b, 2:].view(np.int8)), expect)

    def test_q4_0_nibbles(self):
        x = np.zeros(32, np.float32)
        x[0], x[1], x[2] = 7.0, -7.0, 3.0  # d = 1
        b = pcwt.quantize_q4_0(x)[0]
        self.assertEqual(b[2], (7 + 8) | ((-7 + 8) << 4))
        self.assertEqual(b[3] & 0xF, 3 + 8)
        np.testing.assert_array_equal(pcwt.dequantize(b.tobytes(), "q4_0", [32]), x)


class Errors(unittest.TestCase):
    def test_fixtures_give_the_cpp_messages(self):
        with open(os.path.join(FIXTURES, "example_v2.pcwt"), "rb") as f:
            self.assertEqual(error(f.read()), (
                "weights file format 2.x is newer than this build reads (1.x); update PerfCard", 4))
        with open(os.path.join(FIXTURES, "example_truncated.pcwt"), "rb") as f:
            self.assertEqual(error(f.read()), (
                "truncated file: the header declares 4224 bytes (data section at 1280, 2944 bytes), "
                "the file has 1000", 1000))
        with open(os.path.join(FIXTURES, "example_v1_1.pcwt"), "rb") as f:
            w = pcwt.read_bytes(f.read())
        self.assertNotIn("example.future", w.metadata)
        self.assertEqual(w.tensors["future"].dtype, "dtype#77")

    def test_set_metadata_keeps_the_tensors(self):
        x = np.arange(96, dtype=np.float32).reshape(3, 32)
        data = pcwt.write_bytes(dict(META, figure=[1.0, 2.0], note="old"), {"x": x, "q": pcwt.Q8_0(x)})
        # Longer values move the data section; the tensors must read the same after it.
        new = pcwt.set_metadata(data, {"figure": [3.0, 4.0, 5.0], "note": "a much longer note " * 10, "added": 7})
        w, before = pcwt.read_bytes(new), pcwt.read_bytes(data)
        self.assertEqual(w.metadata["figure"], [3.0, 4.0, 5.0])
        self.assertEqual(w.metadata["added"], 7)
        self.assertEqual(list(w.metadata)[:len(before.metadata)], list(before.metadata))  # in place
        for k in ("predictor", "training.sources"):
            self.assertEqual(w.metadata[k], before.metadata[k])
        for name in ("x", "q"):
            self.assertEqual(w.tensors[name].numpy().tobytes(), before.tensors[name].numpy().tobytes())
            self.assertEqual(w.tensors[name].offset % 64, 0)
        self.assertEqual(pcwt.set_metadata(new, {"figure": [1.0, 2.0], "note": "old"}),
                         pcwt.set_metadata(data, {"added": 7}))  # the same file either way
        with self.assertRaises(pcwt.PcwtError):
            pcwt.set_metadata(data[:-3], {"added": 1})
        gone = pcwt.read_bytes(pcwt.set_metadata(new, {}, remove=("added", "note")))
        self.assertNotIn("added", gone.metadata)
        self.assertNotIn("note", gone.metadata)
        self.assertEqual(gone.metadata["figure"], [3.0, 4.0, 5.0])
        self.assertEqual(gone.tensors["q"].numpy().tobytes(), before.tensors["q"].numpy().tobytes())

    def test_header_and_table(self):
        self.assertEqual(error(b"GGUF\x03\x00\x00\x00"),
                         ('not a PerfCard weights file (magic "GGUF", expected "PCWT")', 0))
        self.assertEqual(error(b"PCWT\x01\x00"), ("truncated header: 40 bytes needed, the file has 6", 6))
        good = pcwt.write_bytes(META, {"a": np.zeros(4, np.float32)})
        self.assertEqual(error(good + b"xyz"), ("3 unexpected bytes after the data section", len(good)))
        bad = bytearray(good)
        struct.pack_into("<I", bad, 8, 48)
        self.assertEqual(error(bytes(bad)), ("alignment 48 is not a power of two between 8 and 65536", 8))
        dup = pcwt.write_bytes(META, {"a": np.zeros(4, np.float32), "b": np.zeros(4, np.float32)})
        self.assertEqual(error(dup.replace(b"\x01\x00\x00\x00b", b"\x01\x00\x00\x00a")[:len(dup)])[0],
                         "duplicate tensor name 'a'")
        raw = pcwt.write_bytes(META, {"w": pcwt.Raw(2, [3, 4], b"\0" * 20)})
        self.assertEqual(error(raw)[0], "tensor 'w': byte size 20 does not match [3, 4] x f16 = 24 bytes")
        missing = dict(META)
        del missing["training.commit"]
        self.assertEqual(error(pcwt.write_bytes(missing, {}, check_required=False)),
                         ("weights file lacks required metadata 'training.commit'", None))
        with self.assertRaises(ValueError):
            pcwt.quantize_q8_0(np.full(32, 1e7, np.float32))


class Manifest(unittest.TestCase):
    def run_script(self, d, *args):
        return subprocess.run([sys.executable, "-m", "scripts.weights.update_manifest", "--weights-dir", d, *args],
                              capture_output=True, text=True, cwd=paths.ROOT)

    def test_check(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "devices.json"), "w") as f:
                f.write('{"a": 1}')
            with open(os.path.join(FIXTURES, "example_v1.pcwt"), "rb") as src, \
                    open(os.path.join(d, "example.pcwt"), "wb") as dst:
                dst.write(src.read())
            self.assertEqual(self.run_script(d).returncode, 0)
            self.assertEqual(self.run_script(d, "--check").returncode, 0)
            with open(os.path.join(d, "devices.json"), "w") as f:
                f.write('{"a": 2}')
            with open(os.path.join(d, "new.json"), "w") as f:
                f.write("[]")
            r = self.run_script(d, "--check")
            self.assertEqual(r.returncode, 1)
            self.assertIn("weights/new.json is not listed", r.stderr)
            self.assertIn("weights/devices.json: sha256 is", r.stderr)
            os.remove(os.path.join(d, "example.pcwt"))
            self.assertIn("lists weights/example.pcwt, which does not exist", self.run_script(d, "--check").stderr)


if __name__ == "__main__":
    unittest.main()
