/*
 * The frames on one direction of a link, in arrival order: a ring that doubles when full. A
 * direction's arrivals are strictly increasing in time (a frame starts after the previous one
 * ends), so only the earliest needs an event in the simulator's queue: the queue holds one entry
 * per busy link direction instead of one per frame on the wire.
 */
#ifndef FABRICSIM_WIRE_FIFO_H
#define FABRICSIM_WIRE_FIFO_H

#include "fabric-packet.h"

#include <cstdint>
#include <memory>

namespace ns3
{

class WireFifo
{
  public:
    struct Frame
    {
        int64_t arrivalTs; ///< simulator time steps
        FabricPacket* p;
        uint64_t epoch; ///< the channel's epoch when it was sent
    };

    WireFifo() = default;
    WireFifo(const WireFifo&) = delete;
    WireFifo& operator=(const WireFifo&) = delete;

    ~WireFifo()
    {
        DeleteFrames();
    }

    bool Empty() const
    {
        return m_size == 0;
    }

    uint32_t Size() const
    {
        return m_size;
    }

    const Frame& Front() const
    {
        return m_slots[m_head];
    }

    void Pop()
    {
        m_head = (m_head + 1) & m_mask;
        --m_size;
    }

    void Push(const Frame& f)
    {
        if (m_size == Capacity())
        {
            Grow();
        }
        m_slots[(m_head + m_size) & m_mask] = f;
        ++m_size;
    }

    /// Deletes the frames still on the wire (teardown).
    void DeleteFrames()
    {
        for (; m_size > 0; Pop())
        {
            delete Front().p;
        }
    }

  private:
    uint32_t Capacity() const
    {
        return m_slots ? m_mask + 1 : 0;
    }

    void Grow()
    {
        const uint32_t cap = Capacity() == 0 ? 4 : 2 * Capacity();
        std::unique_ptr<Frame[]> slots(new Frame[cap]);
        for (uint32_t k = 0; k < m_size; ++k)
        {
            slots[k] = m_slots[(m_head + k) & m_mask];
        }
        m_slots = std::move(slots);
        m_head = 0;
        m_mask = cap - 1;
    }

    std::unique_ptr<Frame[]> m_slots;
    uint32_t m_head = 0;
    uint32_t m_size = 0;
    uint32_t m_mask = 0;
};

} // namespace ns3

#endif
