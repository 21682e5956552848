"""The PCH's validation subprocess: started by harness.engine.pch with the
candidate PCH as CLING_STANDARD_PCH, it imports cppyy, loads the ns-3
libraries, includes the headers and makes ns-3 objects, then prints
OK_MARKER. A file of its own, loaded by path, that imports nothing of the
harness: the child must not load the package it is checking for."""

from __future__ import annotations

import json
import sys

OK_MARKER = "HARNESS_PCH_VALIDATION_OK"


def validate(request: str) -> int:
    """Run in a child with CLING_STANDARD_PCH set to the candidate PCH."""
    req = json.loads(request)
    import cppyy  # noqa: PLC0415 - only ever in the validation subprocess

    import libcppyy  # noqa: PLC0415

    libcppyy.AddSmartPtrType("Ptr")
    for lib in req["libraries"]:
        cppyy.load_library(lib)
    # The PCH must already declare ns-3 before any include; otherwise it was
    # not picked up and would bring nothing.
    if not hasattr(cppyy.gbl, "ns3"):
        print("namespace ns3 not declared: the PCH was not used")
        return 3
    for directory in req["include_dirs"]:
        cppyy.add_include_path(directory)
    for h in req["headers"]:
        cppyy.include(h)  # raises ImportError on failure
    ns3 = cppyy.gbl.ns3
    if hasattr(ns3, "NodeContainer"):
        nodes = ns3.NodeContainer()
        nodes.Create(2)
        if nodes.GetN() != 2:
            print("NodeContainer.Create(2) misbehaved")
            return 5
    if hasattr(ns3, "Simulator") and hasattr(ns3, "Seconds"):
        ns3.Simulator.Stop(ns3.Seconds(1.0))
        ns3.Simulator.Run()
        ns3.Simulator.Destroy()
    sys.stdout.flush()
    print(OK_MARKER, flush=True)
    return 0


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "_validate":
        return validate(argv[1])
    # The PCH the harness uses is built on demand by harness.engine.ns3.load().
    print("internal: python harness/engine/pch_child.py _validate REQUEST_JSON", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
