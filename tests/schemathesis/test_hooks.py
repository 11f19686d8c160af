"""Unit tests of hooks.py's exemptions: what it lets through, and what it must not.

    .venv/bin/python -m unittest discover -s tests/schemathesis -p 'test_*.py'

run.sh runs them before schemathesis itself (they need its package, for hooks.py's imports).
"""

import json
import sys
import unittest
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hooks  # noqa: E402


def case(method: str, path: str, **path_parameters):
    return SimpleNamespace(operation=SimpleNamespace(method=method, path=path), path_parameters=path_parameters)


def response(status: int, code: str, message: str):
    return SimpleNamespace(status_code=status, content=json.dumps({"code": code, "message": message}).encode())


class ImportRefusals(unittest.TestCase):
    def exempt(self, message: str, status: int = 400, code: str = "validation_failed") -> bool:
        return hooks._is_state_dependent_refusal(case("post", "/imports/pets"), response(status, code, message))

    def test_a_refusal_of_the_file_naming_its_line_passes(self):
        self.assertTrue(self.exempt('line 2, column price: "x" is not a price'))
        self.assertTrue(self.exempt("line 1, column name: is there twice"))
        self.assertTrue(self.exempt('line 1: the column "x" is not a column of a pet; the columns are name, ...'))
        self.assertTrue(self.exempt("line 3: 1 cells where the header has 2"))
        self.assertTrue(self.exempt('line 4, column category: there is no category named "Birds"; add it first'))

    def test_a_refusal_of_the_file_as_a_whole_passes(self):
        self.assertTrue(self.exempt("a file may hold at most 100000 pets; line 100002 is one more"))
        self.assertTrue(self.exempt("the file could not be read: invalid data"))
        self.assertTrue(self.exempt("the file broke off before its end"))

    def test_any_other_validation_failed_fails(self):
        self.assertFalse(self.exempt("name: must not be empty"))
        self.assertFalse(self.exempt("createCategories must be true or false"))
        self.assertFalse(self.exempt(""))
        self.assertFalse(self.exempt("line two: no number"))

    def test_another_code_or_status_fails(self):
        self.assertFalse(self.exempt("line 2, column price: x", code="invalid_parameter"))
        self.assertFalse(self.exempt("line 2, column price: x", status=422))

    def test_the_rule_is_the_import_s_alone(self):
        other = hooks._is_state_dependent_refusal(
            case("post", "/pets"), response(400, "validation_failed", "line 2, column price: x"))
        self.assertFalse(other)


if __name__ == "__main__":
    unittest.main()
