"""Tests of the mutant generator (tests/mutations/generate.py)."""

import os
import subprocess
import tempfile
import unittest

from tests.mutations import generate

SOURCE = """\
// A comment with a < b and && that stays.
#include <vector>

namespace x {

int Pick(int a, int b) {
  CHARYBDIS_ASSERT(a < b);
  if (a < b && b != 0) return std::min(a, 3);
  const char* text = "a == b";
  return 0;
}

void Tick(State& state) {
  state.count += 1;
  Touch(state);
  int local = 2;
}

void Check(State& state) {
  CHARYBDIS_PROBE(state.probes, "x.checked");
  state.CheckInvariants();
}

}  // namespace x
"""


def sites_of(source, path="core/x/pick.cc"):
    return generate.file_sites(path, source)


class MaskTest(unittest.TestCase):
    def test_comments_and_literals_are_masked_column_for_column(self):
        line = 'f("a < b", \'<\'); // c && d'
        masked, open_comment = generate.mask_line(line, False)
        self.assertEqual(len(masked), len(line))
        self.assertNotIn("<", masked)
        self.assertNotIn("&&", masked)
        self.assertFalse(open_comment)

    def test_block_comments_span_lines(self):
        masked = generate.masked_lines(["a /* x < y", "z > w */ b < c"])
        self.assertNotIn("<", masked[0])
        self.assertNotIn(">", masked[1])
        self.assertIn("b < c", masked[1])


class SiteTest(unittest.TestCase):
    def test_each_operator_finds_its_sites(self):
        mutated = {(m.operator, m.mutated.strip()) for m in sites_of(SOURCE)}
        self.assertIn(("relational", "if (a <= b && b != 0) return std::min(a, 3);"), mutated)
        self.assertIn(("relational", "if (a < b && b == 0) return std::min(a, 3);"), mutated)
        self.assertIn(("logical", "if (a < b || b != 0) return std::min(a, 3);"), mutated)
        self.assertIn(("min_max", "if (a < b && b != 0) return std::max(a, 3);"), mutated)
        self.assertIn(("off_by_one", "if (a < b && b != 0) return std::min(a, 4);"), mutated)
        self.assertIn(("off_by_one", "if (a < b && b != 0) return std::min(a, 2);"), mutated)
        self.assertIn(("constant", "if (a < b && b != 0) return std::min(a, 0);"), mutated)
        self.assertIn(("negate", "if (!(a < b && b != 0)) return std::min(a, 3);"), mutated)
        self.assertIn(("remove", ";"), mutated)
        self.assertIn(("return_early", "return;\n  Touch(state);"), mutated)

    def test_assertions_probes_comments_strings_and_includes_are_never_mutated(self):
        lines = {m.line_number for m in sites_of(SOURCE)}
        for number, line in enumerate(SOURCE.split("\n"), start=1):
            if any(word in line for word in ("CHARYBDIS_ASSERT", "CHARYBDIS_PROBE", "CheckInvariants", '"a == b"')) \
                    or line.startswith(("//", "#")):
                self.assertNotIn(number, lines, line)

    def test_declarations_are_not_removed(self):
        removed = {m.original.strip() for m in sites_of(SOURCE) if m.operator == "remove"}
        self.assertEqual(removed, {"state.count += 1;", "Touch(state);"})

    def test_return_early_only_in_void_functions(self):
        early = {m.line_number for m in sites_of(SOURCE) if m.operator == "return_early"}
        first_tick_line = SOURCE.split("\n").index("  state.count += 1;") + 1
        self.assertEqual(early, {first_tick_line, first_tick_line + 1, first_tick_line + 2})

    def test_ids_do_not_depend_on_line_numbers(self):
        shifted = sites_of("\n\n" + SOURCE)
        self.assertEqual([m.id for m in sites_of(SOURCE)], [m.id for m in shifted])


class ChoiceTest(unittest.TestCase):
    def sites(self):
        return sites_of(SOURCE, "core/a/a.cc") + sites_of(SOURCE, "core/b/b.cc")

    def test_one_seed_always_gives_the_same_mutants(self):
        first = [m.id for m in generate.choose(self.sites(), 6, 5)]
        self.assertEqual(first, [m.id for m in generate.choose(self.sites(), 6, 5)])
        self.assertNotEqual(first, [m.id for m in generate.choose(self.sites(), 6, 6)])

    def test_folders_take_turns_and_lines_are_used_once(self):
        chosen = generate.choose(self.sites(), 6, 1)
        self.assertEqual([m.folder() for m in chosen], ["core/a", "core/b"] * 3)
        self.assertEqual(len({(m.path, m.line_number) for m in chosen}), 6)


class PatchTest(unittest.TestCase):
    def test_patches_apply_with_git(self):
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "core/x"))
            with open(os.path.join(root, "core/x/pick.cc"), "w") as f:
                f.write(SOURCE)
            subprocess.run(["git", "init", "-q", root], check=True)
            out = os.path.join(root, "out")
            self.assertEqual(generate.main(["--root", root, "--count", "50", "--out", out, "core"]), 0)
            with open(os.path.join(out, "mutants.tsv")) as index:
                rows = index.read().strip().split("\n")
            self.assertEqual(len(rows), len({m.line_number for m in sites_of(SOURCE)}))
            for row in rows:
                patch = os.path.join(out, row.split("\t")[0] + ".patch")
                subprocess.run(["git", "apply", "--check", patch], cwd=root, check=True)


if __name__ == "__main__":
    unittest.main()
