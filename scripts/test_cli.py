"""Every script answers --help without running its job (a calibration stage once refitted and rewrote
weights/roofline.json for `--help`), and refuses options it does not take."""
import contextlib
import glob
import io
import os
import unittest

from scripts import paths
from scripts.cli import no_options


class NoOptionsTest(unittest.TestCase):
    def test_help_prints_the_docstring_and_stops(self):
        out = io.StringIO()
        with self.assertRaises(SystemExit) as e, contextlib.redirect_stdout(out):
            no_options("Refits stage Z.\n\nWrites weights/z.json.", ["--help"])
        self.assertEqual(e.exception.code, 0)
        self.assertIn("Writes weights/z.json.", out.getvalue())

    def test_an_option_it_does_not_take_is_an_error(self):
        with self.assertRaises(SystemExit) as e, contextlib.redirect_stderr(io.StringIO()):
            no_options("Refits stage Z.", ["--check"])
        self.assertEqual(e.exception.code, 2)

    def test_nothing_given_runs_the_job(self):
        self.assertIsNone(no_options("Refits stage Z.", []))


class EveryScriptTest(unittest.TestCase):
    def test_every_script_with_a_main_block_parses_its_command_line(self):
        unparsed = []
        for path in glob.glob(os.path.join(paths.SCRIPTS, "**", "*.py"), recursive=True):
            name = os.path.basename(path)
            if name.startswith("test_") or name == "__init__.py":
                continue
            with open(path) as f:
                text = f.read()
            if 'if __name__ == "__main__":' not in text:
                continue
            if not any(s in text for s in ("argparse", "no_options(", "networks.arguments(", "sys.argv")):
                unparsed.append(os.path.relpath(path, paths.ROOT))
        self.assertEqual(unparsed, [], "scripts that would run their job for --help")


if __name__ == "__main__":
    unittest.main()
