"""SWEEP.yaml, the grid a sweep runs (docs/formats.md, "Sweep input and output"), decoded
strictly: an unknown key, a value of the wrong type or a file that is not there is an error
naming the field, e.g. `sweep.yaml: seeds[2]: must be an integer, got "x"`."""
from dataclasses import dataclass
from typing import Any, NoReturn
from pathlib import Path

from ..errors import WorkloadError
from ..replay.engine import ARRIVALS
from ..scheduler import TIE_BREAKS
from ..sources.files import documents, read_text

KEYS = ("workloads", "configurations", "percentageOfNodesToScore", "seeds", "modes", "tieBreak")
#: mode -> the options it takes
MODE_OPTIONS = {"schedule": (), "queue": ("until",), "replay": ("arrival", "until", "bindLatency"),
                "capacity": ("podspec", "maxLimit")}
GENERATE_KEYS = ("nodes", "pods", "seed")
#: a configuration of this name (or value) is kube-scheduler's default one
DEFAULT = "default"
#: the queue mode's virtual horizon when none is given (as `simulate --queue`)
QUEUE_UNTIL = 3600.0


@dataclass(frozen=True)
class Mode:
    """How a task decides: `schedule` (Scheduler.schedule_pending), `queue` (Simulation.run_until_idle),
    `replay` (Replay, by `arrival`) or `capacity` (copies of `podspec` until one does not fit)."""
    kind: str
    arrival: str | None = None          # replay; None: replay's default for the workload's events
    until: float | None = None          # queue: the horizon; replay: stop time (None: the end)
    bind_latency: float = 0.0           # replay
    podspec: str | None = None          # capacity: the file as the sweep names it
    podspec_path: Path | None = None    # ... and where it is
    max_limit: int = 0                  # capacity: stop after this many instances (0: none)


@dataclass(frozen=True)
class WorkloadSpec:
    """A workload by name: files (resolved), or a generated cluster (`generate`: nodes, pods, seed)."""
    name: str
    files: tuple = ()
    generate: dict | None = None


@dataclass
class Sweep:
    """A SWEEP.yaml as read: the workloads, configurations, percentages, seeds and modes whose
    every combination is a task."""
    path: Path
    workloads: list             # [WorkloadSpec], in file order
    configurations: dict        # name -> KubeSchedulerConfiguration path, None: the default
    percentages: list           # percentageOfNodesToScore values; None: the configuration's
    seeds: list
    modes: list                 # [Mode]
    tie_break: str = "random"


def load_sweep(path) -> Sweep:
    """Reads and checks a SWEEP.yaml; file paths in it are relative to its folder."""
    path = Path(path)
    docs = documents(path, read_text(path))
    if len(docs) != 1 or not isinstance(docs[0], dict):
        raise WorkloadError(str(path), "", "expected one YAML mapping (workloads, configurations, seeds, modes, ...)")
    return decode(docs[0], path)


def decode(doc: dict, path: Path) -> Sweep:
    d = Decoder(str(path), path.parent)
    d.known(doc, KEYS, "")
    if "workloads" not in doc:
        raise WorkloadError(d.where, "workloads", "Required value: at least one workload by name")
    tie_break = doc.get("tieBreak", "random")
    if tie_break not in TIE_BREAKS:
        raise WorkloadError(d.where, "tieBreak", f"must be one of {', '.join(TIE_BREAKS)}, got {shown(tie_break)}")
    return Sweep(path, d.workloads(doc["workloads"]), d.configurations(doc.get("configurations", {DEFAULT: DEFAULT})),
                 d.percentages(doc.get("percentageOfNodesToScore")), d.seeds(doc.get("seeds", [0])),
                 d.modes(doc.get("modes", ["schedule"])), tie_break)


def shown(value) -> str:
    """A value as an error quotes it: strings in double quotes, YAML's words for the rest."""
    if isinstance(value, str):
        return f'"{value}"'
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return str(value)


class Decoder:
    """The checks, each naming the field it is at (`where`: the sweep file)."""

    def __init__(self, where: str, base: Path) -> None:
        self.where, self.base = where, base

    def fail(self, field: str, message: str) -> NoReturn:
        raise WorkloadError(self.where, field, message)

    def known(self, doc: dict, keys, field: str) -> None:
        prefix = f"{field}." if field else ""
        for key in doc:
            if key not in keys:
                self.fail(f"{prefix}{key}", f"unknown field (known: {', '.join(keys)})")

    def integer(self, value, field: str, low: int | None = None, high: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(field, f"must be an integer, got {shown(value)}")
        if low is not None and value < low or high is not None and value > high:
            bounds = f"{low}-{high}" if high is not None else f"at least {low}"
            self.fail(field, f"must be {bounds}, got {value}")
        return value

    def seconds(self, value, field: str, positive: bool) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(field, f"must be a number of seconds, got {shown(value)}")
        if value < 0 or positive and value == 0:
            self.fail(field, f"must be {'positive' if positive else 'non-negative'}, got {value}")
        return float(value)

    def mapping(self, value, field: str) -> dict:
        if not isinstance(value, dict) or not value:
            self.fail(field, f"must be a non-empty mapping of names, got {shown(value)}")
        for name in value:
            if not isinstance(name, str) or not name:
                self.fail(field, f"names must be non-empty strings, got {shown(name)}")
        return value

    def file(self, value, field: str) -> Path:
        if not isinstance(value, str) or not value:
            self.fail(field, f"must be a file path, got {shown(value)}")
        path = self.base / value
        if not path.is_file():
            self.fail(field, f'no such file "{value}" (paths are relative to the sweep file\'s folder {self.base})')
        return path

    def unique(self, values: list, field: str) -> list:
        for i, v in enumerate(values):
            if v in values[:i]:
                self.fail(f"{field}[{i}]", f"{shown(v)} is listed twice")
        return values

    # ---- the axes ------------------------------------------------------------------------------
    def workloads(self, raw) -> list:
        return [self.workload(name, value, f"workloads.{name}") for name, value in self.mapping(raw, "workloads").items()]

    def workload(self, name: str, value, field: str) -> WorkloadSpec:
        if isinstance(value, dict):
            self.known(value, ("generate",), field)
            gen = value.get("generate")
            if not isinstance(gen, dict):
                self.fail(f"{field}.generate", f"must be a mapping (nodes, pods, seed), got {shown(gen)}")
            self.known(gen, GENERATE_KEYS, f"{field}.generate")
            for key in ("nodes", "pods"):
                if key not in gen:
                    self.fail(f"{field}.generate.{key}", "Required value")
            return WorkloadSpec(name, generate={
                "nodes": self.integer(gen["nodes"], f"{field}.generate.nodes", 1),
                "pods": self.integer(gen["pods"], f"{field}.generate.pods", 0),
                "seed": self.integer(gen.get("seed", 1), f"{field}.generate.seed")})
        files = [value] if isinstance(value, str) else value
        if not isinstance(files, list) or not files:
            self.fail(field, f"must be a file, a list of files or {{generate: {{nodes, pods}}}}, got {shown(value)}")
        many = not isinstance(value, str)
        return WorkloadSpec(name, files=tuple(self.file(f, f"{field}[{i}]" if many else field)
                                              for i, f in enumerate(files)))

    def configurations(self, raw) -> dict:
        out = {}
        for name, value in self.mapping(raw, "configurations").items():
            out[name] = None if value == DEFAULT else self.file(value, f"configurations.{name}")
        return out

    def percentages(self, raw) -> list:
        if raw is None:
            return [None]
        values = raw if isinstance(raw, list) else [raw]
        many = isinstance(raw, list)
        if not values:
            self.fail("percentageOfNodesToScore", "must not be an empty list")
        return self.unique([v if v is None else self.integer(
            v, f"percentageOfNodesToScore[{i}]" if many else "percentageOfNodesToScore", 0, 100)
            for i, v in enumerate(values)], "percentageOfNodesToScore")

    def seeds(self, raw) -> list:
        if isinstance(raw, dict):
            self.known(raw, ("from", "to"), "seeds")
            for key in ("from", "to"):
                if key not in raw:
                    self.fail(f"seeds.{key}", "Required value")
            low, high = self.integer(raw["from"], "seeds.from"), self.integer(raw["to"], "seeds.to")
            if high < low:
                self.fail("seeds.to", f"must be at least seeds.from ({low}), got {high}")
            return list(range(low, high + 1))
        if not isinstance(raw, list):
            return [self.integer(raw, "seeds")]
        if not raw:
            self.fail("seeds", "must not be an empty list")
        return self.unique([self.integer(v, f"seeds[{i}]") for i, v in enumerate(raw)], "seeds")

    def modes(self, raw) -> list:
        values = raw if isinstance(raw, list) else [raw]
        if not values:
            self.fail("modes", "must not be an empty list")
        return self.unique([self.mode(v, f"modes[{i}]") for i, v in enumerate(values)], "modes")

    def mode(self, value, field: str) -> Mode:
        options: Any
        if isinstance(value, str):
            kind, options = value, {}
        elif isinstance(value, dict) and len(value) == 1:
            kind, options = next(iter(value.items()))
            options = {} if options is None else options
        else:
            self.fail(field, f"must be a mode name or {{MODE: {{options}}}} with one key, got {shown(value)}")
        if kind not in MODE_OPTIONS:
            self.fail(field, f"unknown mode {shown(kind)} (known: {', '.join(MODE_OPTIONS)})")
        if not isinstance(options, dict):
            self.fail(f"{field}.{kind}", f"must be a mapping of options, got {shown(options)}")
        self.known(options, MODE_OPTIONS[kind], f"{field}.{kind}")
        return getattr(self, f"{kind}_mode")(options, f"{field}.{kind}")

    def schedule_mode(self, options: dict, field: str) -> Mode:
        return Mode("schedule")

    def queue_mode(self, options: dict, field: str) -> Mode:
        return Mode("queue", until=self.seconds(options.get("until", QUEUE_UNTIL), f"{field}.until", True))

    def replay_mode(self, options: dict, field: str) -> Mode:
        arrival = options.get("arrival")
        if arrival is not None and arrival not in ARRIVALS:
            self.fail(f"{field}.arrival", f"must be one of {', '.join(ARRIVALS)}, got {shown(arrival)}")
        until = options.get("until")
        if until is not None and arrival not in ("all", "timestamps"):
            self.fail(f"{field}.until", "needs arrival: timestamps or all (no time passes in settle mode)")
        return Mode("replay", arrival=arrival, until=None if until is None else self.seconds(until, f"{field}.until", True),
                    bind_latency=self.seconds(options.get("bindLatency", 0), f"{field}.bindLatency", False))

    def capacity_mode(self, options: dict, field: str) -> Mode:
        if "podspec" not in options:
            self.fail(f"{field}.podspec", "Required value: the pod template whose copies are counted")
        return Mode("capacity", podspec=options["podspec"], podspec_path=self.file(options["podspec"], f"{field}.podspec"),
                    max_limit=self.integer(options.get("maxLimit", 0), f"{field}.maxLimit", 0))
