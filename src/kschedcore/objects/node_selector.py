"""Node selectors as kube-scheduler reads them: requirements, terms (ANDed requirements), preferred
terms; shared by pods (nodeAffinity) and PersistentVolumes (spec.nodeAffinity)."""
import re
from dataclasses import dataclass

from . import resources as res
from .fields import FieldReader, parse_go_int64

SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str
    values: tuple


@dataclass(frozen=True, slots=True)
class SelectorTerm:
    """One nodeSelectorTerm: its expressions and fields are ANDed."""
    expressions: tuple = ()
    fields: tuple = ()
    parses: bool = True     # False: kube-scheduler fails to parse it, so it matches nothing

    @property
    def empty(self) -> bool:
        return not self.expressions and not self.fields


@dataclass(frozen=True, slots=True)
class PreferredTerm:
    weight: int
    term: SelectorTerm


_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def requirement_parses(key: str, op: str, values: tuple) -> bool:
    """labels.NewRequirement's checks: a qualified key, valid label values, value counts."""
    if not res.is_qualified_name(key):
        return False
    if not all(len(v) <= 63 and _LABEL_VALUE.match(v) for v in values):
        return False
    if op in ("In", "NotIn"):
        return bool(values)
    if op in ("Exists", "DoesNotExist"):
        return not values
    return len(values) == 1 and parse_go_int64(values[0]) is not None



class SelectorReader(FieldReader):
    """A FieldReader that also reads node selector terms and node affinity."""

    def requirement(self, r, path, is_field):
        """Returns (Requirement, parses) -- kube-scheduler ignores a term whose requirements do
        not parse (it then matches nothing), so value-count errors are not fatal here."""
        key = self.string(r, "key", path + ".key")
        op = self.string(r, "operator", path + ".operator")
        values = tuple(self.string_list(r, "values", path + ".values"))
        if op not in SELECTOR_OPERATORS or (is_field and op not in ("In", "NotIn")):
            self.fail(path + ".operator", f'unknown operator "{op}"')
        if is_field:
            # fields.OneTerm(Not)EqualSelector: any key, exactly one value
            parses = len(values) == 1
        else:
            parses = requirement_parses(key, op, values)
        return Requirement(key, op, values), parses

    def term(self, t, path):
        t = self.item(t, path)
        parsed = [self.requirement(self.item(r, f"{path}.matchExpressions[{i}]"),
                                   f"{path}.matchExpressions[{i}]", False)
                  for i, r in enumerate(self.seq(t, "matchExpressions", path + ".matchExpressions"))]
        n_exprs = len(parsed)
        parsed += [self.requirement(self.item(r, f"{path}.matchFields[{i}]"), f"{path}.matchFields[{i}]", True)
                   for i, r in enumerate(self.seq(t, "matchFields", path + ".matchFields"))]
        reqs = tuple(r for r, _ in parsed)
        return SelectorTerm(reqs[:n_exprs], reqs[n_exprs:], all(ok for _, ok in parsed))

    def node_affinity_of(self, na: dict, path: str):
        """(required terms or None, preferred terms or None) of a v1 NodeAffinity object."""
        required = None
        req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
        if req is not None:
            rpath = path + ".requiredDuringSchedulingIgnoredDuringExecution"
            req = self.item(req, rpath)
            terms = self.seq(req, "nodeSelectorTerms", rpath + ".nodeSelectorTerms")
            required = tuple(self.term(t, f"{rpath}.nodeSelectorTerms[{i}]") for i, t in enumerate(terms))
        preferred = []
        ppath = path + ".preferredDuringSchedulingIgnoredDuringExecution"
        for i, p in enumerate(self.seq(na, "preferredDuringSchedulingIgnoredDuringExecution", ppath)):
            p = self.item(p, f"{ppath}[{i}]")
            weight = self.integer(p, "weight", f"{ppath}[{i}].weight")
            if not 0 <= weight <= 100:   # kube-scheduler ignores weight 0
                self.fail(f"{ppath}[{i}].weight", f"must be in the range 0-100, got {weight}")
            preferred.append(PreferredTerm(weight, self.term(p.get("preference") or {}, f"{ppath}[{i}].preference")))
        # nil vs empty matters: an empty preferred list still makes NodeAffinity score (all 0)
        is_set = na.get("preferredDuringSchedulingIgnoredDuringExecution") is not None
        return required, (tuple(preferred) if is_set else None)
