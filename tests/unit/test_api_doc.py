"""docs/API.md against the package: every exported name is listed, every documented signature
is the real one, every documented model lists its real fields in order, every error its real
bases; modules and pages point at a reference that exists; the package data it ships exists."""

from __future__ import annotations

import dataclasses
import inspect
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import stratagate
import stratagate.models
import stratagate.results
from stratagate import AsyncStrataGate, MemoryView, StrataGate
from stratagate.options import MemoryOptions

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "API.md"
CALL = re.compile(r"^`(?:StrataGate\.)?(\w+)\((.*)\)`$")


def page() -> str:
    return PAGE.read_text(encoding="utf-8")


def rows(marker: str) -> list[list[str]]:
    """The cells of the body rows of the first table after ``marker`` (a heading or a line)."""
    text = page()
    lines = text[text.index(marker) + len(marker) :].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    table = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        table.append(line)
    return [
        [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        for line in table[2:]  # past the header and the rule
    ]


def signature_text(function: Callable[..., Any], *, method: bool) -> str:
    """``a, b=1, *, c=None`` as the page writes a signature (double quotes, no annotations)."""
    parameters = list(inspect.signature(function).parameters.values())[1 if method else 0 :]
    parts: list[str] = []
    for parameter in parameters:
        if parameter.kind is parameter.KEYWORD_ONLY and "*" not in parts:
            parts.append("*")
        if parameter.kind is parameter.VAR_KEYWORD:
            parts.append(f"**{parameter.name}")
        elif parameter.default is parameter.empty:
            parts.append(parameter.name)
        else:
            parts.append(f"{parameter.name}={parameter.default!r}".replace("'", '"'))
    return ", ".join(parts)


def documented_calls(*sections: str) -> dict[str, str]:
    calls: dict[str, str] = {}
    for section in sections:
        for row in rows(section):
            match = CALL.match(row[0])
            if match:
                assert match.group(1) not in calls, f"{match.group(1)} documented twice"
                calls[match.group(1)] = match.group(2)
    return calls


OPTIONS = "Options (keyword arguments"
METHOD_SECTIONS = [
    "### Ingest",
    "### Reading",
    "### Events and governance",
    "### Retrieval and adoption",
    "### Manual element projection",
    "### External memory",
    "### Audit",
]


def test_every_exported_name_is_documented() -> None:
    text = page()
    missing = [
        name for name in stratagate.__all__ if f"`{name}`" not in text and f"`{name}(" not in text
    ]
    assert missing == []


def test_every_method_is_documented_with_its_real_signature() -> None:
    calls = documented_calls(*METHOD_SECTIONS)
    public = {
        name
        for name, value in vars(StrataGate).items()
        if not name.startswith("_") and callable(value)
    }
    assert set(calls) == public - {"open", "in_memory"}
    for name, parameters in calls.items():
        assert parameters == signature_text(getattr(StrataGate, name), method=True), name
    opening = documented_calls("## Opening a memory")
    assert opening["open"] == signature_text(StrataGate.open, method=False)
    assert opening["in_memory"] == signature_text(StrataGate.in_memory, method=False)
    database = documented_calls("## The database")
    class_methods = {
        name
        for name, value in vars(StrataGate).items()
        if not name.startswith("_") and isinstance(value, classmethod)
    }
    assert set(database) == class_methods - {"open", "in_memory"}
    for name, parameters in database.items():
        assert parameters == signature_text(getattr(StrataGate, name), method=False), name


def test_properties_options_and_the_async_twin() -> None:
    properties = {name for name, value in vars(StrataGate).items() if isinstance(value, property)}
    assert {row[0].strip("`") for row in rows("Properties:")} == properties
    options = [row[0].strip("`") for row in rows(OPTIONS)]
    fields = [f.name for f in dataclasses.fields(MemoryOptions) if f.name != "extra"]
    assert options == fields
    for row in rows(OPTIONS):
        default = next(f for f in dataclasses.fields(MemoryOptions) if f.name == row[0].strip("`"))
        shown = row[1].strip("`")
        value = default.default
        assert shown == (value.__name__ if callable(value) else repr(value).replace("'", '"'))
    documented = set(documented_calls(*METHOD_SECTIONS))
    coroutines = {
        name
        for name, value in vars(AsyncStrataGate).items()
        if not name.startswith("_") and inspect.iscoroutinefunction(value)
    }
    assert coroutines == documented
    for name in documented:
        assert signature_text(getattr(AsyncStrataGate, name), method=True) == signature_text(
            getattr(StrataGate, name), method=True
        ), name
    assert properties <= {n for n, v in vars(AsyncStrataGate).items() if isinstance(v, property)}


def test_memory_view_names_exist() -> None:
    text = page().split("\n## MemoryView\n", 1)[1].split("\n## ", 1)[0]
    for name in re.findall(r"`(\w+)(?:\(|`)", text):
        if name != "StrataGate":
            assert hasattr(MemoryView, name), name


def model_rows() -> list[list[str]]:
    return [
        *rows("Data models are pydantic v2, frozen. Inputs and callback outputs:"),
        *rows("Stored state:"),
        *rows("Results of methods:"),
    ]


def test_every_model_lists_its_fields_in_order() -> None:
    documented = set()
    for cells in model_rows():
        name = re.match(r"`(\w+)`", cells[0]).group(1)  # type: ignore[union-attr]
        model = (
            getattr(stratagate, name, None)
            or getattr(stratagate.results, name, None)
            or getattr(stratagate.models, name)
        )
        fields = re.findall(r"(?:^|, )`(\w+)[^`]*`", cells[1])
        assert fields == list(model.model_fields), name
        documented.add(name)
    exported = {
        name
        for name in stratagate.__all__
        if isinstance(getattr(stratagate, name), type)
        and issubclass(getattr(stratagate, name), BaseModel)
    }
    assert exported <= documented


def test_every_function_is_documented_with_its_real_signature() -> None:
    calls = documented_calls("## Pure functions")
    functions = {
        name for name in stratagate.__all__ if inspect.isfunction(getattr(stratagate, name))
    }
    assert set(calls) == functions
    for name, parameters in calls.items():
        assert parameters == signature_text(getattr(stratagate, name), method=False), name


def test_every_error_lists_its_bases() -> None:
    errors = {
        name
        for name in stratagate.__all__
        if isinstance(getattr(stratagate, name), type)
        and issubclass(getattr(stratagate, name), BaseException)
    }
    documented = {}
    for cells in rows("## Errors"):
        documented[cells[0].strip("`")] = [b.strip("` ") for b in cells[1].split(",")]
    assert set(documented) == errors
    for name, bases in documented.items():
        assert bases == [base.__name__ for base in getattr(stratagate, name).__bases__], name


def test_references_to_the_api_page_resolve() -> None:
    """Code names it ``docs/API.md``; a page's link is relative to the page."""
    for path in [*(ROOT / "stratagate").rglob("*.py"), *(ROOT / "projections").rglob("*.py")]:
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"(\S*)API\.md", text):
            assert match.group(1).endswith("docs/"), f"{path}: {match.group(0)}"
    for doc in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        for target in re.findall(r"\]\(([^)#]+\.md)", doc.read_text(encoding="utf-8")):
            assert (doc.parent / target).is_file(), f"{doc.name} links to missing {target}"
        for mention in re.findall(r"[\w./-]*API\.md", doc.read_text(encoding="utf-8")):
            assert (doc.parent / mention).is_file() or (ROOT / mention).is_file(), (
                f"{doc.name} mentions missing {mention}"
            )


def test_package_data_patterns_name_files_that_exist() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    for package, patterns in config["tool"]["setuptools"]["package-data"].items():
        for pattern in patterns:
            assert list((ROOT / package).glob(pattern)), f"{package}/{pattern} matches nothing"


@pytest.mark.parametrize("name", ["StrataGate", "AsyncStrataGate", "MemoryView", "HitList"])
def test_classes_have_a_section_or_row(name: str) -> None:
    assert f"## {name}" in page() or f"| `{name}` |" in page()
