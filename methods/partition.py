"""Client partitions of a labelled training set, and how far each client's labels are from the whole.

Every function draws only from the np.random.Generator it is given; each client's
indices are returned sorted, as int64 arrays.
"""
from __future__ import annotations

import numpy as np

MAX_DIRICHLET_TRIES = 1000


def iid_partition(n: int, num_clients: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Shuffle 0..n-1 and deal it into ``num_clients`` near-equal parts."""
    _check_clients(num_clients)
    return [np.sort(part) for part in np.array_split(rng.permutation(n).astype(np.int64), num_clients)]


def dirichlet_partition(labels: np.ndarray, num_clients: int, alpha: float,
                        rng: np.random.Generator, min_size: int = 10) -> list[np.ndarray]:
    """Label skew: each class is spread over clients in proportions ~ Dir(alpha).

    As in the common reference code (NIID-Bench's ``partition_data``), a client
    already holding n/num_clients samples gets no more of later classes, and the
    whole draw repeats until every client holds at least ``min_size`` samples.
    """
    _check_clients(num_clients)
    if alpha <= 0:
        raise ValueError(f"alpha must be positive, got {alpha}")
    labels = np.asarray(labels)
    n = len(labels)
    if num_clients * min_size > n:
        raise ValueError(f"{num_clients} clients x min_size {min_size} exceeds {n} samples")
    for _ in range(MAX_DIRICHLET_TRIES):
        parts: list[list[np.ndarray]] = [[] for _ in range(num_clients)]
        sizes = np.zeros(num_clients, dtype=np.int64)
        for cls in np.unique(labels):
            idx = rng.permutation(np.flatnonzero(labels == cls))
            proportions = rng.dirichlet(np.full(num_clients, alpha))
            capped = proportions * (sizes < n / num_clients)
            proportions = capped / capped.sum() if capped.sum() > 0 else proportions
            cuts = (np.cumsum(proportions) * len(idx)).astype(np.int64)[:-1]
            for client, chunk in enumerate(np.split(idx, cuts)):
                parts[client].append(chunk)
                sizes[client] += len(chunk)
        if sizes.min() >= min_size:
            return [np.sort(np.concatenate(p)).astype(np.int64) for p in parts]
    raise ValueError(f"no Dirichlet(alpha={alpha}) draw gave every client >= {min_size} samples "
                     f"in {MAX_DIRICHLET_TRIES} tries")


def label_restricted_partition(labels: np.ndarray, num_clients: int, labels_per_client: int,
                               rng: np.random.Generator) -> list[np.ndarray]:
    """Each client holds exactly L distinct labels, dealt round a random cycle of the classes.

    Client slot s holds the classes at cycle positions sL .. sL + L - 1 (mod C), so each label is
    held by floor or ceil(num_clients * L / C) clients (every label used when num_clients * L >= C)
    and, when L divides C, the clients fall into C / L disjoint groups holding the same L labels
    (100 clients at L = 2 of 10 classes: 5 label pairs of 20 clients each). A label's samples are
    split evenly among its holders; samples of unused labels are left out. This is not the
    HeteroFL/FedRolex reference's "non-iid-L", which deals random label shards: `shard_partition`.
    """
    _check_clients(num_clients)
    labels = np.asarray(labels)
    classes = np.unique(labels)
    if not 1 <= labels_per_client <= len(classes):
        raise ValueError(f"labels_per_client must be in 1..{len(classes)}, got {labels_per_client}")
    cycle = rng.permutation(classes)
    slots = rng.permutation(num_clients)
    held = {int(client): [cycle[(slot * labels_per_client + j) % len(classes)]
                          for j in range(labels_per_client)]
            for slot, client in enumerate(slots)}
    parts: list[list[np.ndarray]] = [[] for _ in range(num_clients)]
    for cls in classes:
        holders = [client for client in range(num_clients) if cls in held[client]]
        if not holders:
            continue
        idx = rng.permutation(np.flatnonzero(labels == cls))
        for client, chunk in zip(holders, np.array_split(idx, len(holders))):
            parts[client].append(chunk)
    return [_sorted_union(p) for p in parts]


def shard_partition(labels: np.ndarray, num_clients: int, labels_per_client: int,
                    rng: np.random.Generator) -> list[np.ndarray]:
    """The HeteroFL/FedRolex reference's "non-iid-L" split (its data.py, ``non_iid``), drawn from ``rng``.

    Each class's samples are cut into S = num_clients * L / C equal shards (the remainder spread one
    each over the first shards); the list of every class repeated S times is shuffled and dealt L to a
    client. A client's labels are the distinct ones it was dealt, so one dealt the same class twice
    holds a single class; it takes one random shard of each of its labels (a single-class client holds
    one shard, not two). Shards no client takes are left out. The reference cuts each class in the data
    set's own order; here a class's samples are shuffled first, so the shards do not depend on how
    the data set's files are ordered.
    """
    _check_clients(num_clients)
    labels = np.asarray(labels)
    classes = np.unique(labels)
    if not 1 <= labels_per_client <= len(classes):
        raise ValueError(f"labels_per_client must be in 1..{len(classes)}, got {labels_per_client}")
    if num_clients * labels_per_client % len(classes):
        raise ValueError(f"{num_clients} clients x {labels_per_client} labels is not a whole number of shards "
                         f"per class of {len(classes)} classes")
    per_class = num_clients * labels_per_client // len(classes)
    shards: dict[int, list[np.ndarray]] = {}
    for cls in classes:
        idx = rng.permutation(np.flatnonzero(labels == cls))
        if len(idx) < per_class:
            raise ValueError(f"class {cls} has {len(idx)} samples, fewer than its {per_class} shards")
        shards[int(cls)] = list(np.array_split(idx, per_class))
    dealt = rng.permutation(np.repeat(classes, per_class)).reshape(num_clients, labels_per_client)
    parts: list[np.ndarray] = []
    for held in dealt:
        chunks = [shards[int(cls)].pop(int(rng.integers(len(shards[int(cls)])))) for cls in np.unique(held)]
        parts.append(_sorted_union(chunks))
    return parts


def one_class_per_client(labels: np.ndarray, num_clients: int,
                         rng: np.random.Generator) -> list[np.ndarray]:
    """Client k holds only class k mod C; a class held by several clients is split evenly."""
    _check_clients(num_clients)
    labels = np.asarray(labels)
    classes = np.unique(labels)
    parts: list[np.ndarray] = [np.empty(0, dtype=np.int64)] * num_clients
    for c, cls in enumerate(classes):
        holders = list(range(c, num_clients, len(classes)))
        if not holders:
            continue
        idx = rng.permutation(np.flatnonzero(labels == cls))
        for client, chunk in zip(holders, np.array_split(idx, len(holders))):
            parts[client] = np.sort(chunk).astype(np.int64)
    return parts


def subsample_per_client(parts: list[np.ndarray], max_per_client: int,
                         rng: np.random.Generator) -> list[np.ndarray]:
    """Keep at most ``max_per_client`` indices of each client, drawn without replacement."""
    if max_per_client < 0:
        raise ValueError(f"max_per_client must be >= 0, got {max_per_client}")
    return [np.sort(rng.choice(part, size=max_per_client, replace=False)).astype(np.int64)
            if len(part) > max_per_client else np.asarray(part, dtype=np.int64)
            for part in parts]


def label_distribution(labels: np.ndarray, num_classes: int) -> np.ndarray:
    """Fraction of samples per class; all NaN for an empty set."""
    counts = np.bincount(np.asarray(labels, dtype=np.int64), minlength=num_classes).astype(np.float64)
    total = counts.sum()
    return counts / total if total > 0 else np.full(num_classes, np.nan)


def majority_accuracy(labels: np.ndarray) -> float:
    """The accuracy (%) on ``labels`` of the best constant prediction, their most frequent label: chance for
    a classifier evaluated on them."""
    labels = np.asarray(labels, dtype=np.int64)
    if len(labels) == 0:
        raise ValueError("no labels: the majority accuracy of an empty set is undefined")
    return float(100.0 * np.bincount(labels).max() / len(labels))


def tv_distance(p: np.ndarray, q: np.ndarray) -> float:
    """Total variation distance 0.5 * sum |p - q|."""
    return float(0.5 * np.abs(np.asarray(p, dtype=np.float64) - np.asarray(q, dtype=np.float64)).sum())


def client_tv_distances(parts: list[np.ndarray], labels: np.ndarray, num_classes: int) -> np.ndarray:
    """Each client's label distribution vs the global one of ``labels`` (NaN for empty clients)."""
    labels = np.asarray(labels)
    global_dist = label_distribution(labels, num_classes)
    return np.array([tv_distance(label_distribution(labels[part], num_classes), global_dist)
                     for part in parts], dtype=np.float64)


def _sorted_union(chunks: list[np.ndarray]) -> np.ndarray:
    return np.sort(np.concatenate(chunks)).astype(np.int64) if chunks else np.empty(0, dtype=np.int64)


def _check_clients(num_clients: int) -> None:
    if num_clients < 1:
        raise ValueError(f"num_clients must be >= 1, got {num_clients}")
