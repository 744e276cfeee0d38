"""validate, design, schema, vocabulary: reading the files, running nothing."""
from __future__ import annotations

from pathlib import Path

from harness.cli.common import (
    add_selection,
    settings_of,
)
from harness.pipeline import select


def cmd_validate(args) -> int:
    """Every file valid and every claim decidable by design (else exit 2); lists, without failing,
    the claims whose profile has fewer seeds than they need."""
    from harness.loading.design import designs, short_of_seeds
    from harness.loading.planning_spread import baseline_spreads
    settings = settings_of(args)
    catalog, claims = select(settings, check_design=True)
    print(f"ok: {len(catalog.specs)} experiment specs and {len(claims)} claims of "
          f"{len(catalog.papers)} papers are valid")
    short = short_of_seeds(designs(catalog, baseline_spreads(settings.root / "baselines", catalog)))
    if short:
        print(f"{len(short)} claim expectations need more seeds than their profile has (more seeds would decide "
              "them):")
        for design in short:
            print(f"  {design.text()}")
    _list_changed(catalog, settings)
    _warn_without_reference(catalog)
    return 0


def _list_changed(catalog, settings) -> None:
    """The claims whose expectation changed after their records: declared (each tested only on seeds run
    after its change), and any whose recorded sequential looks test another expectation than it states."""
    from harness.sequential.changes import declared, recorded_otherwise
    changes = declared(catalog)
    if changes:
        print(f"{len(changes)} claim expectation(s) changed after their records (the new one is tested only on "
              "seeds run after the change; the old verdict is reported beside it):")
        for line in changes:
            print(f"  {line}")
    folders = [settings.store_dir, *([settings.records_dir] if settings.committed_records else [])]
    for line in recorded_otherwise(catalog, folders):
        print(f"warning: {line}")


def _warn_without_reference(catalog) -> None:
    """A spec whose accuracy-dependent claims have no learning level to read: what its report loses."""
    from harness.verdicts.levels import without_reference
    for target, claims in without_reference(catalog):
        missing = ("declares no `reference:` (the paper's main method of the experiment: variant, accuracy in %, "
                   "source)" if target.kind.learning is not None else
                   f"is of kind {target.kind.name!r}, which declares no `learning` (the accuracy metric a level is "
                   "read from), so no `reference:` can give it one")
        plural = len(claims) != 1
        listed = ", ".join(claims[:3]) + (", ..." if len(claims) > 3 else "")
        print(f"warning: {target.doc.file}: experiment {target.spec.experiment!r} {missing}; its {len(claims)} "
              f"accuracy-dependent claim{'s' if plural else ''} ({listed}) get{'' if plural else 's'} no learning "
              "level in the report: neither learned nor weak evidence, and a FAIL cannot be told from the scale's "
              "limit")


def cmd_design(args) -> int:
    """What each selected claim's test can decide at each profile, before any run."""
    from harness.loading.design import designs
    from harness.loading.planning_spread import baseline_spreads
    settings = settings_of(args)
    catalog, claims = select(settings, args.paper, args.claim, check_design=True)
    catalog.check_profiles(args.profile)
    wanted = {c.id for c in claims}
    for design in designs(catalog, baseline_spreads(settings.root / "baselines", catalog)):
        if design.claim not in wanted or (args.profile and design.profile not in args.profile):
            continue
        needed = design.seeds_needed if design.seeds_needed is not None else "-"
        mark = "short" if design.short_of_seeds else "ok"
        print(f"{design.claim}  {design.profile}  PASS {'reachable' if design.pass_reachable else 'unreachable'} "
              f"(seeds {design.pass_seeds or '-'}), FAIL {'reachable' if design.fail_reachable else 'unreachable'} "
              f"(seeds {design.fail_seeds or '-'}); both possible from {needed}, has {design.seeds}: {mark} — "
              f"{design.reason}" + (f"; {design.power}" if design.power else "")
              + (f"; planning spread: {design.spread}" if design.spread else ""))
    return 0


def cmd_schema(args) -> int:
    from harness.loading.jsonschema import write_schemas
    out = Path(args.out)
    for path in write_schemas(out):
        print(path)
    return 0


def cmd_vocabulary(args) -> int:
    from harness.loading.vocabulary import render
    print(render(), end="")
    return 0


def add_commands(sub) -> None:
    """validate, design, schema, vocabulary: reading the files, running nothing."""
    sub.add_parser("validate", help="check every claim and spec file, and that every claim can PASS and FAIL at "
                                    "some number of seeds (listing those whose profile has too few)"
                   ).set_defaults(func=cmd_validate)
    design = sub.add_parser("design", help="per claim and profile, from the design alone: whether PASS and FAIL "
                                           "are reachable and the seeds each needs (harness.loading.design)")
    add_selection(design)
    design.set_defaults(func=cmd_design)
    schema = sub.add_parser("schema", help="write JSON Schema for claim and spec files")
    schema.add_argument("--out", default="schema", help="output folder (default: schema)")
    schema.set_defaults(func=cmd_schema)
    sub.add_parser("vocabulary", help="print the claim vocabulary and every kind's metrics (docs/claims.md)"
                   ).set_defaults(func=cmd_vocabulary)
