"""Safe YAML loading that remembers the line of every key and item.

`yaml.SafeLoader` builds plain Python data; this module walks the composed node
tree instead so that each value keeps its position, and it rejects duplicate
keys, which a plain safe load would silently overwrite.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.errors import Problem, SpecError, format_field

Path_ = tuple[str | int, ...]


@dataclass
class Document:
    """Data of one YAML file and the line (1-based) of each key or item path."""

    file: Path
    data: Any
    lines: dict[Path_, int] = field(default_factory=dict)

    def line_of(self, path: Path_) -> int | None:
        """Line of the deepest prefix of `path` that the file spells out."""
        path = tuple(path)
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get((), 1)

    def problem(self, path: Path_, message: str) -> Problem:
        return Problem(self.file, self.line_of(path), format_field(path), message)


def load_document(file: Path, display_name: Path | None = None) -> Document:
    """Parse `file` safely; YAML syntax errors and empty files become SpecError."""
    name = display_name or file
    text = Path(file).read_text(encoding="utf-8")
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise SpecError([Problem(name, 1, "<document>", "file is empty")])
        doc = Document(name, None, {(): node.start_mark.line + 1})
        doc.data = _build(loader, node, (), doc)
        return doc
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark else None
        message = f"YAML syntax error: {error.problem or error.context}"
        raise SpecError([Problem(name, line, "<document>", message)]) from None
    finally:
        loader.dispose()


def _build(loader: yaml.SafeLoader, node: yaml.Node, path: Path_, doc: Document) -> Any:
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise SpecError([doc.problem(path, "mapping keys must be plain scalars")])
            key = loader.construct_object(key_node)
            key_path = (*path, key)
            line = key_node.start_mark.line + 1
            if key in result:
                first = doc.lines.get(key_path)
                raise SpecError([Problem(doc.file, line, format_field(key_path),
                                         f"duplicate key {key!r} (first defined on line {first})")])
            doc.lines[key_path] = line
            result[key] = _build(loader, value_node, key_path, doc)
        return result
    if isinstance(node, yaml.SequenceNode):
        items = []
        for index, item in enumerate(node.value):
            doc.lines[(*path, index)] = item.start_mark.line + 1
            items.append(_build(loader, item, (*path, index), doc))
        return items
    return loader.construct_object(node, deep=True)
