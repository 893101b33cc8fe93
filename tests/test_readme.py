import doctest
from pathlib import Path


def test_readme_examples_run():
    readme = Path(__file__).resolve().parent.parent / "README.md"
    failures, attempted = doctest.testfile(str(readme), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert attempted > 0 and failures == 0
