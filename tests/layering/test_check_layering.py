"""check-layering.py against scratch trees: clean passes; each kind of breach fails, naming the
file, the line and the rule; an exception nothing uses any longer fails."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "check-layering.py")

LAYERS = {
    "layers": [
        {"name": "common", "paths": ["common"], "may_use": []},
        {"name": "rdma", "paths": ["contrib/rdma"], "may_use": ["common", "ns-3"]},
        {"name": "topologies", "paths": ["topologies"], "may_use": ["common"]},
        {"name": "topologies-helper", "paths": ["topologies/helper"],
         "may_use": ["common", "ns-3", "rdma", "topologies"]},
        {"name": "collectives", "paths": ["collectives"], "may_use": ["common", "topologies"]},
    ],
    "exceptions": [],
}

CLEAN = {
    "common/input-error.h": "#include <string>\n",
    "contrib/rdma/model/rdma-nic.h": '#include "ns3/object.h"\n#include "input-error.h"\n',
    "topologies/topology.h": '#include "input-error.h"\n#include <nlohmann/json.hpp>\n',
    "topologies/helper/fabric-topology-helper.h":
        '#include "ns3/rdma-nic.h"\n#include "ns3/node.h"\n#include "topology.h"\n',
    "collectives/executor.h": '#include "topology.h"\n',
    "topologies/CMakeLists.txt":
        "add_library(fabricsim-topologies SHARED topology.cc)\n"
        "target_link_libraries(fabricsim-topologies PUBLIC fabricsim-common)\n",
    "common/CMakeLists.txt": "add_library(fabricsim-common SHARED input-error.cc)\n",
    "contrib/rdma/CMakeLists.txt":
        "fabricsim_module(rdma SOURCES model/rdma-nic.cc HEADERS model/rdma-nic.h\n"
        "  LIBS fabricsim-common fabricsim_ns3_core)\n",
}


class CheckLayeringTest(unittest.TestCase):
    def check(self, files, layers=LAYERS):
        with tempfile.TemporaryDirectory() as root:
            for rel, text in files.items():
                os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
                with open(os.path.join(root, rel), "w") as f:
                    f.write(text)
            data = os.path.join(root, "layers.json")
            with open(data, "w") as f:
                json.dump(layers, f)
            table = subprocess.run([sys.executable, CHECKER, "--data", data, "--markdown"],
                                   capture_output=True, text=True, check=True).stdout
            os.makedirs(os.path.join(root, "docs"), exist_ok=True)
            with open(os.path.join(root, "docs", "architecture.md"), "w") as f:
                f.write("# Architecture\n<!-- layer table: tests/layering/check-layering.py "
                        "--markdown -->\n" + table + "<!-- end of layer table -->\n")
            run = subprocess.run([sys.executable, CHECKER, "--root", root, "--data", data],
                                 capture_output=True, text=True)
        return run.returncode, run.stdout

    def breach(self, rel, text):
        return self.check(dict(CLEAN, **{rel: CLEAN.get(rel, "") + text}))

    def test_clean_tree_passes(self):
        self.assertEqual(self.check(CLEAN), (0, ""))

    def test_plain_layer_including_ns3_fails(self):
        rc, out = self.breach("topologies/topology.h", '#include "ns3/simulator.h"\n')
        self.assertEqual(rc, 1)
        self.assertIn('topologies/topology.h:3: includes "ns3/simulator.h": '
                      "layer topologies may not use ns-3", out)

    def test_lower_layer_including_a_higher_one_fails(self):
        rc, out = self.breach("topologies/topology.h", '#include "executor.h"\n')
        self.assertEqual(rc, 1)
        self.assertIn("(collectives/executor.h): layer topologies may not use collectives", out)

    def test_module_including_a_helper_through_ns3_fails(self):
        rc, out = self.breach("contrib/rdma/model/rdma-nic.h",
                              '#include "ns3/fabric-topology-helper.h"\n')
        self.assertEqual(rc, 1)
        self.assertIn("layer rdma may not use topologies-helper", out)

    def test_common_including_any_layer_fails(self):
        rc, out = self.breach("common/input-error.h", '#include "topology.h"\n')
        self.assertEqual(rc, 1)
        self.assertIn("layer common may not use topologies", out)

    def test_cmake_link_to_a_higher_layer_fails(self):
        rc, out = self.breach("topologies/CMakeLists.txt",
                              "target_link_libraries(fabricsim-topologies PUBLIC fabricsim-rdma)\n")
        self.assertEqual(rc, 1)
        self.assertIn("topologies/CMakeLists.txt:3: fabricsim-topologies links fabricsim-rdma: "
                      "layer topologies may not use rdma", out)

    def test_cmake_export_of_another_layers_folder_fails(self):
        rc, out = self.breach("collectives/CMakeLists.txt",
                              "add_library(fabricsim-collectives SHARED executor.cc)\n"
                              "target_include_directories(fabricsim-collectives PUBLIC "
                              "${CMAKE_SOURCE_DIR}/contrib/rdma/model)\n")
        self.assertEqual(rc, 1)
        self.assertIn("layer collectives may not use rdma", out)

    def test_exception_allows_its_edge_and_must_stay_in_use(self):
        layers = dict(LAYERS, exceptions=[
            {"from": ["topologies/topology.h"], "to": "ns-3", "why": "being moved"}])
        files = dict(CLEAN, **{"topologies/topology.h": '#include "ns3/simulator.h"\n'})
        self.assertEqual(self.check(files, layers), (0, ""))
        rc, out = self.check(CLEAN, layers)
        self.assertEqual(rc, 1)
        self.assertIn("exception topologies/topology.h -> ns-3 is no longer needed", out)

    def test_docs_table_out_of_date_fails(self):
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "docs"))
            with open(os.path.join(root, "docs", "architecture.md"), "w") as f:
                f.write("<!-- layer table: tests/layering/check-layering.py --markdown -->\n"
                        "| layer | paths | may use |\n<!-- end of layer table -->\n")
            run = subprocess.run([sys.executable, CHECKER, "--root", root],
                                 capture_output=True, text=True)
        self.assertEqual(run.returncode, 1)
        self.assertIn("the layer table differs from tests/layering/layers.json", run.stdout)


if __name__ == "__main__":
    unittest.main()
