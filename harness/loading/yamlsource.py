"""Safe YAML loading that remembers the line of every key and item.

`yaml.SafeLoader` builds plain Python data; this module walks the composed node
tree instead so that each value keeps its position. On top of a plain safe load it
rejects duplicate keys (which a plain load would silently overwrite), non-finite
numbers (`.nan`, `.inf`: a bound or tolerance no value can miss), recursive aliases,
and alias expansion beyond a fixed node budget (a few hundred bytes of nested aliases
can otherwise expand into billions of nodes). Merge keys (`<<: *base`) are honoured,
and a key written after them overrides the merged one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.errors import Problem, SpecError, format_field

Path_ = tuple[str | int, ...]

NODE_BUDGET = 100_000
"""Most nodes a document may hold once its aliases are expanded (the shipped files hold a few thousand)."""
MERGE_TAG = "tag:yaml.org,2002:merge"
PLAIN_COLLECTION_TAGS = ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")
SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's parser where PyYAML was built with it (about 10x faster); the same safe constructor."""


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


def _read_text(file: Path, name: Path) -> str:
    data = Path(file).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise SpecError([Problem(name, line, "<document>",
                                 f"not valid UTF-8: byte 0x{data[error.start]:02x} at offset {error.start}; "
                                 "save the file as UTF-8")]) from None


def load_document(file: Path, display_name: Path | None = None) -> Document:
    """Parse `file` safely; every problem becomes a SpecError naming the file and line."""
    name = display_name or file
    loader = SafeLoader(_read_text(file, name))
    try:
        node = loader.get_single_node()
        if node is None:
            raise SpecError([Problem(name, 1, "<document>", "file is empty")])
        _check_graph(node, name)
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


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [child for pair in node.value for child in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _check_graph(root: yaml.Node, name: Path) -> None:
    """Refuse recursive aliases, and documents whose expansion exceeds NODE_BUDGET nodes.

    The composer shares one node object between an anchor and its aliases, so the node
    graph is a DAG for a sane file and has a cycle for a recursive alias. The expanded
    size of every node is counted once (memoised), so a billion-laugh file is refused
    before anything is expanded.
    """
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            on_path.discard(id(node))
            size = 1 + sum(sizes[id(child)] for child in _children(node))
            if size - len(sizes) > NODE_BUDGET:
                raise SpecError([Problem(name, node.start_mark.line + 1, "<document>",
                                         f"aliases expand this document by more than {NODE_BUDGET:,} nodes "
                                         "beyond those it spells out; refusing to expand it")])
            sizes[id(node)] = size
            continue
        if id(node) in sizes:
            continue
        on_path.add(id(node))
        stack.append((node, True))
        for child in _children(node):
            if id(child) in on_path:
                raise SpecError([Problem(name, child.start_mark.line + 1, "<document>",
                                         "recursive alias: this anchor's node contains an alias to itself")])
            if id(child) not in sizes:
                stack.append((child, False))


def _merged_pairs(node: yaml.MappingNode, path: Path_, doc: Document) -> list[tuple[yaml.Node, yaml.Node, bool]]:
    """(key, value, explicit) pairs: merged ones first (later merges override earlier), then the file's own."""
    merged: list[tuple[yaml.Node, yaml.Node, bool]] = []
    own: list[tuple[yaml.Node, yaml.Node, bool]] = []
    for key_node, value_node in node.value:
        if key_node.tag != MERGE_TAG:
            own.append((key_node, value_node, True))
            continue
        sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
        for source in reversed(sources):  # YAML: the first mapping listed wins
            if not isinstance(source, yaml.MappingNode):
                raise SpecError([doc.problem(path, "a merge key (<<) takes a mapping or a list of mappings")])
            merged.extend((k, v, False) for k, v, _ in _merged_pairs(source, path, doc))
    return merged + own


def _build(loader: yaml.constructor.SafeConstructor, node: yaml.Node, path: Path_, doc: Document) -> Any:
    if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and node.tag not in PLAIN_COLLECTION_TAGS:
        raise SpecError([Problem(doc.file, node.start_mark.line + 1, format_field(path),
                                 f"tag {node.tag!r} is not allowed: a claim or spec holds plain mappings, "
                                 "lists and scalars")])
    if isinstance(node, yaml.MappingNode):
        result: dict[Any, Any] = {}
        explicit: set[Any] = set()
        for key_node, value_node, is_explicit in _merged_pairs(node, path, doc):
            if not isinstance(key_node, yaml.ScalarNode):
                raise SpecError([doc.problem(path, "mapping keys must be plain scalars")])
            key = loader.construct_object(key_node)
            key_path = (*path, key)
            line = key_node.start_mark.line + 1
            if key in explicit:
                first = doc.lines.get(key_path)
                raise SpecError([Problem(doc.file, line, format_field(key_path),
                                         f"duplicate key {key!r} (first defined on line {first})")])
            if is_explicit:
                explicit.add(key)
            doc.lines[key_path] = line
            result[key] = _build(loader, value_node, key_path, doc)
        return result
    if isinstance(node, yaml.SequenceNode):
        items = []
        for index, item in enumerate(node.value):
            doc.lines[(*path, index)] = item.start_mark.line + 1
            items.append(_build(loader, item, (*path, index), doc))
        return items
    value = loader.construct_object(node, deep=True)
    if isinstance(value, float) and not math.isfinite(value):
        raise SpecError([Problem(doc.file, node.start_mark.line + 1, format_field(path),
                                 f"non-finite number {node.value!r} is not allowed (a bound or tolerance "
                                 "that no value can meet or miss, or a setting no run can use)")])
    return value
