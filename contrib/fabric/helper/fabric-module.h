// Umbrella header of the fabric module, as ns-3 modules provide.
#ifndef FABRICSIM_FABRIC_MODULE_H
#define FABRICSIM_FABRIC_MODULE_H
#include "ns3/deadlock-detector.h"
#include "ns3/fabric-route-table.h"
#include "ns3/fabric-switch.h"
#include "ns3/pfc-watchdog.h"
#include "ns3/rdma-module.h"
#include "ns3/shared-buffer-mmu.h"
#include "ns3/switch-port.h"
#endif
