// Umbrella header of the rdma module, as ns-3 modules provide.
#ifndef FABRICSIM_RDMA_MODULE_H
#define FABRICSIM_RDMA_MODULE_H
#include "input-error.h"

#include "ns3/congestion-control.h"
#include "ns3/dcqcn.h"
#include "ns3/dctcp.h"
#include "ns3/fabric-channel.h"
#include "ns3/fabric-net-device.h"
#include "ns3/fabric-packet.h"
#include "ns3/hpcc.h"
#include "ns3/rdma-nic.h"
#include "ns3/rdma-queue-pair.h"
#include "ns3/roce-headers.h"
#include "ns3/swift.h"
#include "ns3/timely.h"
#endif
