# Testbed entry points. `make setup` once, then `make test`.
SHELL := /bin/bash
VENV ?= .venv
BIN := $(abspath $(VENV))/bin
export PATH := $(BIN):$(PATH)
export ANSIBLE_CONFIG := $(abspath ansible.cfg)
# Ansible needs a UTF-8 locale; tools are run with LC_ALL=C by the modules themselves.
export LANG := C.UTF-8
export LC_ALL := C.UTF-8
# Molecule scenarios, one per role (molecule/<role>/molecule.yml); `make test`
# runs them all. LAB_SCENARIOS build or drive pieces of the labs (bridges,
# systemd host containers, the qemu director VM with real IPVS, the container
# experiment's KVM guest, the storage node VM with storage_zfs and storage_ceph
# in it) under names and addresses of their own, so they run beside a lab that
# is up; they are the slow ones (about 25 min here, plus the VM image builds
# and the OpenZFS module build on a fresh machine) and run last. `make molecule-lab` runs only them. molecule/default is a no-op stub
# (molecule loads it before any scenario) and is left out.
LAB_SCENARIOS ?= lab_network lab_containers lab_vm lvs_director runtime_kvm storage_zfs storage_ceph
ALL_SCENARIOS := $(filter-out default,$(notdir $(patsubst %/,%,$(dir $(wildcard molecule/*/molecule.yml)))))
SCENARIOS ?= $(filter-out $(LAB_SCENARIOS),$(ALL_SCENARIOS)) $(LAB_SCENARIOS)
INVENTORY ?= inventories/lab

.PHONY: help setup setup-lab images test lint import-map unit integration faults hardware-like integration-services integration-others lab-storage-image topology molecule molecule-lab scenarios lab-scenarios example-report pin clean-results \
        lvs-lab-up lvs-lab-down lvs nfv report collection collection-sanity ee ee-test

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

setup:  ## a controller: its apt packages and .venv (no Docker, qemu or server); idempotent
	./scripts/setup.sh

setup-lab:  ## setup, and this machine as the local lab host (what make test needs)
	./scripts/setup.sh --lab

images:  ## (re)build the lab's container images locally
	ansible-playbook playbooks/lab-images.yml

test: lint unit integration collection-sanity molecule  ## everything CI runs

# ansible-test sanity's pep8 settings (its pycodestyle, its ignores) on what the collection is built
# from, so a style issue its sanity would report shows here first; the two files with long lines it
# is told to accept (collection/sanity-ignore.txt) are left out.
PEP8 := pycodestyle --max-line-length 160 --ignore E402,W503,W504,E741,E203,E701,E704 \
	--exclude .venv,build,context,schemas.py,lvs-timetable-bench.py

lint:  ## yamllint, ansible-lint (production profile), ruff, pycodestyle (ansible-test's pep8), every ansible.module_utils import resolved by pyright
	yamllint -s .
	ansible-lint
	ruff check .
	$(PEP8) library module_utils filter_plugins action_plugins callback_plugins connection_plugins roles
	./scripts/check-imports.sh

import-map:  ## write .config/import-map again (after adding a module_utils file): editors resolve ansible.module_utils.<name>
	python scripts/import-map.py

unit:  ## pytest unit tests (parsers, filters, store, schema, report)
	python -m pytest -q tests/unit

# The integration tests that start servers on this host (Apache, vsftpd, Postfix, netserver,
# nuttcp) and the container-compare run; .ci/run runs them in a lane of their own, beside the rest.
INTEGRATION_SERVICES := tests/integration/test_container_compare.py tests/integration/test_guest_services_native.py \
                        tests/integration/test_guest_services_restore.py tests/integration/test_workload_cc_tools.py

integration:  ## short real smoke runs on loopback (tools -> modules -> store -> report): both halves below
	python -m pytest -q --durations=12 tests/integration

integration-services:  ## the integration tests that start servers on this host, and the small container-compare run
	python -m pytest -q --durations=12 $(INTEGRATION_SERVICES)

integration-others:  ## every other integration test (runs beside integration-services: they share no server, port or lock)
	python -m pytest -q --durations=12 tests/integration $(addprefix --ignore=,$(INTEGRATION_SERVICES))

faults:  ## fault injection on the labs (LVS: VM killed, Apache stopped, container paused, link down, SIGINT, full disk, a real server killed mid-httperf (found by the watchdog); storage: VM killed mid-fio and mid-rebuild, SIGINT mid-rebuild then rerun, a foreign pool and cluster refused and left intact, an operator's pool and cluster used in place (bring your own) and left intact; containers: Docker guest killed (mid-sysbench; mid-ab, found by the watchdog), LXC guest stopped, KVM guest's qemu killed mid-point; NFV: firewall container stopped, a link of the chain pulled (veth down) mid-point, the backend losing power mid-iperf3 (found by the watchdog), SIGINT during iperf3 then rerun; docs/faults.md); slow, needs root. FAULTS=-k<name> picks cases
	./scripts/ensure-dockerd.sh
	python -m pytest -v tests/faults $(FAULTS)

hardware-like:  ## the hardware path on this machine: ssh-only hosts (non-root + sudo, pinned host keys, packages from Debian), short LVS, storage, NFV and container sweeps through inventories/lab-ssh, cpu-scaling and NFV through a copy of inventories/example_hardware; slow, needs root and Debian's mirror
	./scripts/ensure-dockerd.sh
	python -m pytest -v tests/hardware_like

molecule:  ## molecule test for every role scenario (SCENARIOS)
	./scripts/ensure-dockerd.sh
	set -e; for s in $(SCENARIOS); do echo "=== molecule test -s $$s"; molecule test -s $$s; done

scenarios:  ## print the molecule scenarios `make molecule` runs, in order (.ci/run times each)
	@echo $(SCENARIOS)

topology:  ## draw docs/topology.md again: the experiments' topology pictures from inventories/lab (playbooks/show-topology.yml)
	ansible-playbook playbooks/show-topology.yml -i inventories/lab -e testbed_topology_file=$(abspath docs/topology.md)

example-report:  ## render docs/example-report (a real LVS lab run's documents) again: report.md/html, CSV, charts
	python scripts/testbed_report.py docs/example-report

lab-scenarios:  ## print the lab scenarios (.ci/run runs them in a lane of their own, beside the others)
	@echo $(LAB_SCENARIOS)

molecule-lab:  ## molecule test for the LVS lab scenarios (bridges, host containers, director VM)
	./scripts/ensure-dockerd.sh
	set -e; for s in $(LAB_SCENARIOS); do echo "=== molecule test -s $$s"; molecule test -s $$s; done

pin:  ## re-resolve requirements.in into requirements.txt
	python -m pip install -q -r requirements.in && python -m pip freeze --exclude-editable | grep -v -e '^pip==' -e '^lxc==' > requirements.txt

lvs-lab-up:  ## bring the local LVS lab up
	ansible-playbook playbooks/lvs-lab-up.yml -i $(INVENTORY)

lvs-lab-down:  ## tear the local LVS lab down
	ansible-playbook playbooks/lvs-lab-down.yml -i $(INVENTORY)

lvs:  ## experiment 1: LVS scheduler comparison
	ansible-playbook playbooks/lvs-compare.yml -i $(INVENTORY)

nfv:  ## experiment 3: Docker NFV service chain
	ansible-playbook playbooks/nfv-chain.yml -i $(INVENTORY)

lab-storage-image:  ## build the lab storage node's image (kernel, OpenZFS modules, root filesystem; cached), which the storage scenarios share
	./scripts/ensure-dockerd.sh
	ansible-playbook playbooks/lab-storage-image.yml

collection:  ## build the collection testbed.infra from the repository into build/collection (tree and tarball; docs/collection.md)
	python scripts/build-collection.py

ee:  ## the execution environment image testbed-ee:local, built here from the lab's Debian image (no registry; reused while its inputs are unchanged; docs/collection.md)
	./scripts/ensure-dockerd.sh
	python scripts/build-ee.py

ee-test:  ## ansible-navigator plans every experiment inside testbed-ee:local (builds it first when out of date: minutes); not in `make test` (docs/ci.md)
	./scripts/ensure-dockerd.sh
	python -m pytest -v tests/ee

collection-sanity: collection  ## ansible-test sanity (Python 3.11) on the built collection, installed outside the repository; slow the first time (its venvs)
	./scripts/collection-sanity.sh

report:  ## render a run directory: make report RUN=results/<experiment>/<run-id>
	python scripts/testbed_report.py $(RUN)
