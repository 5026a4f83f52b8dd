"""Folders read as one input made of their files (its parts), in their order.

Two tools save one thing as a folder of files: a Hugging Face ``save_to_disk`` folder holds a
dataset's data files (:func:`arrow.dataset_files`), and the OpenHands software agent SDK
persists a conversation as ``<conversation id>/base_state.json`` beside
``events/event-00000-<event id>.json``, ``event-00001-...``: one JSON document an event
(its ``EventLog``: ``openhands/sdk/conversation/persistence_const.py``); tau2-bench's directory
form saves a run as ``results.json`` (its ``info`` and ``tasks``) beside
``simulations/<simulation id>.json``, one simulation a file (``Results.save(format="dir")``,
``tau2/data_model/simulation.py``). Such a folder is one input,
read as its parts in turn (``Source.parts``); a folder holding several is walked to each.
The records layer knows only the files' layout: which source reads them is the content's to say.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from knowledgepulse.records import arrow

EVENTS = "events"
"""The folder of a persisted OpenHands conversation that holds its events."""
EVENT_FILE = re.compile(r"event-(\d+)-[^/]*\.json")
"""An event's file (``event-{idx:05d}-{event_id}.json``, the index padded to five digits at least,
not cut at five): its index, a number, orders it."""
STATE = "base_state.json"
"""The conversation's state beside its events (its ``execution_status``, its agent), optional:
read after the events, so that the first record (an event) says which source reads them."""


RESULTS = "results.json"
"""A tau2 run folder's metadata (``info``, ``tasks``, ``simulation_index``), read first: it says
which source reads the simulations after it, and what run they belong to."""
SIMULATIONS = "simulations"
"""The folder of a tau2 run that holds its simulations, one JSON document a file."""


def is_parted_folder(folder: Path) -> bool:
    """Whether ``folder`` is one input made of its files: a dataset's, a conversation's, a run's."""
    return (
        arrow.is_dataset_folder(folder)
        or is_conversation_folder(folder)
        or bool(_run_files(_run(folder)))
    )


def is_conversation_folder(folder: Path) -> bool:
    """Whether ``folder`` is a persisted OpenHands conversation, or its ``events`` folder.

    The ``events`` folder given is read as its conversation, not as one run an event.
    """
    return bool(_event_files(_conversation(folder)))


def _conversation(folder: Path) -> Path:
    """The conversation folder of ``folder``: itself, or its parent when it is ``events``."""
    named_events = folder.name == EVENTS and not (folder / EVENTS).is_dir()
    return folder.parent if named_events else folder


def folder_parts(folder: Path) -> list[Path]:
    """The files a parted folder is read as, in order; InputFileError for another folder.

    A conversation's events by their index, then its ``base_state.json`` where there is one; a
    tau2 run's ``results.json``, then its simulations by name (as tau2's ``Results.load``); a
    dataset's data files as its ``state.json`` lists them.
    """
    events = _event_files(_conversation(folder))
    if not events:
        return _run_files(_run(folder)) or arrow.dataset_files(folder)
    state = _conversation(folder) / STATE
    return [*events, *([state] if state.is_file() else [])]


def _event_files(folder: Path) -> list[Path]:
    """The event files of ``folder / events``, by index (none when it is no such folder)."""
    try:
        names = os.listdir(folder / EVENTS)
    except OSError:  # no events folder (or not one to read): no conversation
        return []
    found = [(match, name) for name in names if (match := EVENT_FILE.fullmatch(name))]
    return [folder / EVENTS / name for _, name in sorted(found, key=lambda m: (int(m[0][1]), m[1]))]


def _run(folder: Path) -> Path:
    """The tau2 run folder of ``folder``: itself, or its parent when it is the run's simulations.

    The ``simulations`` folder given is read as its run, its metadata first, not as one run a
    file.
    """
    named = folder.name == SIMULATIONS and (folder.parent / RESULTS).is_file()
    return folder.parent if named and not (folder / SIMULATIONS).is_dir() else folder


def _run_files(folder: Path) -> list[Path]:
    """A tau2 run folder's ``results.json`` and simulation files (none when it is no such folder).

    A name starting with a dot is left out: tau2 writes each simulation to a hidden temporary
    file (``.sim_*.json``) before it renames it, so one left behind is no simulation.
    """
    if not (folder / RESULTS).is_file():
        return []
    try:
        names = os.listdir(folder / SIMULATIONS)
    except OSError:  # no simulations folder: results.json is a file of its own
        return []
    simulations = sorted(name for name in names if name.endswith(".json") and name[:1] != ".")
    return [folder / RESULTS, *(folder / SIMULATIONS / name for name in simulations)]
