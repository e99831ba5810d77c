"""scripts/check_layers.py on small trees made here: clean, a cycle, an upward include and an
upward CMake link. Each case asserts the exit code and that the message names the file."""

import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "check_layers.py")


def make_tree(files):
    root = tempfile.mkdtemp(prefix="layers-")
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
    return root


def check(root):
    done = subprocess.run([sys.executable, SCRIPT, "--root", root], capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


CLEAN = {
    "core/model.hpp": "#pragma once\n",
    "core/judge.hpp": '#pragma once\n#include "core/model.hpp"\n',
    "core/judge.cpp": '#include "core/judge.hpp"\n',
    "outcome/report.hpp": '#pragma once\n#include "core/model.hpp"\n',
    "controller/run/stages.cpp": '#include "outcome/report.hpp"\n#include "core/judge.hpp"\n',
    "core/CMakeLists.txt": "add_library(preflight_core STATIC judge.cpp)\n"
                           "target_link_libraries(preflight_core PUBLIC yaml-cpp)\n",
    "controller/run/CMakeLists.txt": "add_library(preflight_run STATIC stages.cpp)\n"
                                     "target_link_libraries(preflight_run PUBLIC preflight_outcome"
                                     " preflight_core)\n",
}


class CheckLayers(unittest.TestCase):
    def test_clean_tree_passes(self):
        rc, out = check(make_tree(CLEAN))
        self.assertEqual(rc, 0, out)
        self.assertIn("0 violation(s)", out)

    def test_cycle_between_modules_fails_and_names_it(self):
        files = dict(CLEAN)
        files["core/model.hpp"] = '#pragma once\n#include "core/judge.hpp"\n'
        rc, out = check(make_tree(files))
        self.assertEqual(rc, 1, out)
        self.assertRegex(out, r"include cycle: core/(judge|model) -> core/(judge|model) -> core/")
        self.assertEqual(out.count("include cycle"), 1, out)

    def test_cycle_through_a_cpp_counts(self):
        # model.cpp including judge.hpp closes a loop with judge.hpp including model.hpp.
        files = dict(CLEAN)
        files["core/model.cpp"] = '#include "core/model.hpp"\n#include "core/judge.hpp"\n'
        rc, out = check(make_tree(files))
        self.assertEqual(rc, 1, out)
        self.assertIn("include cycle: core/judge -> core/model -> core/judge", out)
        self.assertIn("includes at core/judge.hpp:2, core/model.cpp:2", out)

    def test_upward_include_fails_with_file_and_line(self):
        files = dict(CLEAN)
        files["core/judge.cpp"] = '#include "core/judge.hpp"\n#include "outcome/report.hpp"\n'
        rc, out = check(make_tree(files))
        self.assertEqual(rc, 1, out)
        self.assertIn('core/judge.cpp:2: includes "outcome/report.hpp": core may not depend on '
                      "outcome", out)

    def test_sideways_include_fails(self):
        files = dict(CLEAN)
        files["outcome/report.hpp"] = '#pragma once\n#include "plugins/check.hpp"\n'
        files["plugins/check.hpp"] = "#pragma once\n"
        rc, out = check(make_tree(files))
        self.assertEqual(rc, 1, out)
        self.assertIn("outcome may not depend on plugins", out)

    def test_upward_cmake_link_fails(self):
        files = dict(CLEAN)
        files["core/CMakeLists.txt"] = ("add_library(preflight_core STATIC judge.cpp)\n"
                                        "target_link_libraries(preflight_core PUBLIC "
                                        "preflight_run)\n")
        rc, out = check(make_tree(files))
        self.assertEqual(rc, 1, out)
        self.assertIn("core/CMakeLists.txt:2: preflight_core links preflight_run", out)

    def test_the_repository_itself_is_clean(self):
        rc, out = check(os.path.join(os.path.dirname(__file__), "..", ".."))
        self.assertEqual(rc, 0, out)


if __name__ == "__main__":
    unittest.main()
