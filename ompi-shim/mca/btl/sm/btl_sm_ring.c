/* SPDX-License-Identifier: BSD-3-Clause */
/* btl sm's segment (create or attach, whoever comes first: the header, the fast boxes, the
 * cells) and its bounded multi-producer, single-consumer ring of cells. Each cell carries a
 * sequence number: a producer claims position pos when the cell's seq equals pos (compare-and-swap
 * on the shared enqueue position), fills it and publishes seq = pos + 1; the consumer reads it then
 * and frees it with seq = pos + cells. */
#include "herd_config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ompi-shim/mca/btl/sm/btl_sm.h"
#include "opal/status.h"

#define BTL_SM_HEADER_BYTES 256u /* the header, rounded up to keep boxes and cells on lines */

_Static_assert(sizeof(btl_sm_header_t) == BTL_SM_HEADER_BYTES, "the header is 4 cache lines");
_Static_assert(sizeof(btl_sm_cell_t) == 32, "a cell's header is 32 bytes");
_Static_assert(sizeof(btl_sm_fbox_t) == 128, "a box's control is 2 cache lines");

static size_t fboxes_bytes(uint32_t num_fboxes, uint32_t fbox_size)
{
    return (size_t) num_fboxes * (sizeof(btl_sm_fbox_t) + fbox_size);
}

size_t btl_sm_segment_size(const btl_sm_geometry_t *g)
{
    return BTL_SM_HEADER_BYTES + fboxes_bytes(g->num_fboxes, g->fbox_size) +
           (size_t) g->num_cells * g->cell_size;
}

static btl_sm_cell_t *cell_at(const btl_sm_segment_t *seg, uint64_t pos)
{
    return (btl_sm_cell_t *) (seg->cells + (size_t) (pos & (seg->num_cells - 1)) * seg->cell_size);
}

static bool power_of_two(uint32_t n)
{
    return 0 != n && 0 == (n & (n - 1));
}

static bool valid_geometry(const btl_sm_geometry_t *g)
{
    return g->num_cells >= 2 && power_of_two(g->num_cells) && g->cell_size >= 64 &&
           0 == g->cell_size % 8 && g->num_cells <= (1u << 20) && g->cell_size <= (1u << 24) &&
           g->num_fboxes <= 1024 &&
           (0 == g->num_fboxes ||
            (power_of_two(g->fbox_size) && g->fbox_size >= 256 && g->fbox_size <= (1u << 20)));
}

static long elapsed_ms(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - start->tv_sec) * 1000 + (now.tv_nsec - start->tv_nsec) / 1000000;
}

static void set_view(btl_sm_segment_t *seg, void *base, size_t size)
{
    btl_sm_header_t *h = base;

    seg->header = h;
    seg->size = size;
    seg->num_cells = h->num_cells;
    seg->cell_size = h->cell_size;
    seg->payload = seg->cell_size - sizeof(btl_sm_cell_t);
    seg->num_fboxes = h->num_fboxes;
    seg->fbox_size = h->fbox_size;
    seg->cells =
        (unsigned char *) base + BTL_SM_HEADER_BYTES + fboxes_bytes(h->num_fboxes, h->fbox_size);
}

static int create(int fd, uint32_t owner, const btl_sm_geometry_t *g, btl_sm_segment_t *seg)
{
    size_t size = btl_sm_segment_size(g);
    /* reserve the pages now: a full /dev/shm is an error here, not a SIGBUS later */
    if (0 != ftruncate(fd, (off_t) size) || 0 != (errno = posix_fallocate(fd, 0, (off_t) size))) {
        return HERD_ERR_IN_ERRNO;
    }
    void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (MAP_FAILED == base) {
        return HERD_ERR_IN_ERRNO;
    }
    btl_sm_header_t *h = base;
    h->version = BTL_SM_VERSION;
    h->size = size;
    h->num_cells = g->num_cells;
    h->cell_size = g->cell_size;
    h->owner = owner;
    h->num_fboxes = g->num_fboxes;
    h->fbox_size = 0 == g->num_fboxes ? 0 : g->fbox_size;
    atomic_store_explicit(&h->enqueue_pos, 0, memory_order_relaxed);
    atomic_store_explicit(&h->dequeue_pos, 0, memory_order_relaxed);
    atomic_store_explicit(&h->fboxes_claimed, 0, memory_order_relaxed);
    /* the boxes' owners and records are 0 in fresh pages: unclaimed, nothing published */
    set_view(seg, base, size);
    for (uint32_t i = 0; i < g->num_cells; ++i) {
        atomic_store_explicit(&cell_at(seg, i)->seq, i, memory_order_relaxed);
    }
    atomic_store_explicit(&h->magic, BTL_SM_MAGIC, memory_order_release);
    return HERD_SUCCESS;
}

/* Somebody else created it: wait until it has its size and its magic. */
static int attach_existing(int fd, int timeout_ms, btl_sm_segment_t *seg)
{
    struct timespec start;
    struct stat st;

    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        if (0 != fstat(fd, &st)) {
            return HERD_ERR_IN_ERRNO;
        }
        if (st.st_size >= (off_t) BTL_SM_HEADER_BYTES) {
            break;
        }
        if (elapsed_ms(&start) > timeout_ms) {
            return HERD_ERR_TIMEOUT;
        }
        sched_yield();
    }
    size_t size = (size_t) st.st_size;
    void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (MAP_FAILED == base) {
        return HERD_ERR_IN_ERRNO;
    }
    btl_sm_header_t *h = base;
    while (BTL_SM_MAGIC != atomic_load_explicit(&h->magic, memory_order_acquire)) {
        if (elapsed_ms(&start) > timeout_ms) {
            munmap(base, size);
            return HERD_ERR_TIMEOUT;
        }
        sched_yield();
    }
    btl_sm_geometry_t g = {.num_cells = h->num_cells,
                           .cell_size = h->cell_size,
                           .num_fboxes = h->num_fboxes,
                           .fbox_size = h->fbox_size};
    if (BTL_SM_VERSION != h->version || h->size != size || !valid_geometry(&g) ||
        btl_sm_segment_size(&g) != size) {
        munmap(base, size);
        return HERD_ERR_VERSION_MISMATCH;
    }
    set_view(seg, base, size);
    return HERD_SUCCESS;
}

int btl_sm_segment_attach(const char *name, uint32_t owner, const btl_sm_geometry_t *geometry,
                          int timeout_ms, btl_sm_segment_t *seg, bool *created)
{
    int rc;

    if (!valid_geometry(geometry)) {
        return HERD_ERR_BAD_PARAM;
    }
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
        rc = create(fd, owner, geometry, seg);
        if (HERD_SUCCESS != rc) {
            int err = errno;
            shm_unlink(name);
            errno = err;
        }
        close(fd);
        *created = true;
        return rc;
    }
    if (EEXIST != errno) {
        return HERD_ERR_IN_ERRNO;
    }
    fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0) {
        return HERD_ERR_IN_ERRNO;
    }
    rc = attach_existing(fd, timeout_ms, seg);
    close(fd);
    *created = false;
    return rc;
}

void btl_sm_segment_detach(btl_sm_segment_t *seg)
{
    if (NULL != seg->header) {
        munmap(seg->header, seg->size);
    }
    memset(seg, 0, sizeof(*seg));
}

bool btl_sm_ring_push(btl_sm_segment_t *seg, uint32_t src, int tag, uint64_t total,
                      const void *data, uint32_t frag_len, uint64_t *pos_out)
{
    btl_sm_header_t *h = seg->header;
    uint64_t pos = atomic_load_explicit(&h->enqueue_pos, memory_order_relaxed);
    btl_sm_cell_t *cell;

    for (;;) {
        cell = cell_at(seg, pos);
        uint64_t seq = atomic_load_explicit(&cell->seq, memory_order_acquire);
        int64_t diff = (int64_t) (seq - pos);
        if (0 == diff) {
            if (atomic_compare_exchange_weak_explicit(&h->enqueue_pos, &pos, pos + 1,
                                                      memory_order_relaxed, memory_order_relaxed)) {
                break;
            }
            /* another producer took it: pos holds the new position */
        } else if (diff < 0) {
            return false; /* the cell still holds a message of the previous lap: full */
        } else {
            pos = atomic_load_explicit(&h->enqueue_pos, memory_order_relaxed);
        }
    }
    cell->src = src;
    cell->tag = tag;
    cell->total = total;
    cell->frag_len = frag_len;
    if (frag_len > 0) {
        memcpy(cell->data, data, frag_len);
    }
    atomic_store_explicit(&cell->seq, pos + 1, memory_order_release);
    if (NULL != pos_out) {
        *pos_out = pos;
    }
    return true;
}

bool btl_sm_ring_consumed(const btl_sm_segment_t *seg, uint64_t pos)
{
    /* the owner advances dequeue_pos after it handled the cell (delivered or joined it) */
    return atomic_load_explicit(&seg->header->dequeue_pos, memory_order_acquire) > pos;
}

btl_sm_cell_t *btl_sm_ring_peek(btl_sm_segment_t *seg)
{
    uint64_t pos = atomic_load_explicit(&seg->header->dequeue_pos, memory_order_relaxed);
    btl_sm_cell_t *cell = cell_at(seg, pos);

    if (atomic_load_explicit(&cell->seq, memory_order_acquire) != pos + 1) {
        return NULL;
    }
    return cell;
}

void btl_sm_ring_release(btl_sm_segment_t *seg, btl_sm_cell_t *cell)
{
    uint64_t pos = atomic_load_explicit(&seg->header->dequeue_pos, memory_order_relaxed);

    atomic_store_explicit(&cell->seq, pos + seg->num_cells, memory_order_release);
    atomic_store_explicit(&seg->header->dequeue_pos, pos + 1, memory_order_release);
}
