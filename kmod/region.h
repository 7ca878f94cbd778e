/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Memory that RDMA writes come from or go into (region.c): vmalloc_user()
 * regions, DMA-mapped in chunks, the FRWR MR sets a connection registers
 * over them, and the chunks a peer advertised for us to write into.
 */
#ifndef SPINDLE_REGION_H
#define SPINDLE_REGION_H

#include <linux/kref.h>
#include <linux/scatterlist.h>
#include <rdma/ib_verbs.h>

struct spindle_region {
	struct kref ref;
	void *vaddr;			/* vmalloc_user: zeroed, mappable */
	size_t size;			/* whole pages */
	struct ib_device *ibdev;	/* DMA-mapped for it while non-NULL */
	u32 nchunks;			/* one MR covers one chunk */
	u32 chunk_bytes;
	struct sg_table *sgts;		/* [nchunks], DMA-mapped */
};

/* One set of MRs over a region: local (source) or remote-writable. */
struct spindle_mrset {
	struct spindle_region *reg;
	u32 n;
	int access;
	struct ib_mr **mrs;		/* [n], one per region chunk */
};

/* Where a peer told us to write (from its hello). */
struct spindle_rchunk {
	u64 iova;
	u32 rkey;
	u32 len;
};

struct spindle_rregion {
	u64 size;
	u32 n;
	struct spindle_rchunk *chunks;
};

struct spindle_region *spindle_region_alloc(size_t size);
void spindle_region_put(struct spindle_region *reg);
int spindle_region_dma_map(struct spindle_region *reg, struct ib_device *ibdev,
			   u32 max_pages);
void spindle_region_dma_unmap(struct spindle_region *reg);
int spindle_mrset_init(struct spindle_mrset *set, struct spindle_region *reg,
		       struct ib_pd *pd, int access);
void spindle_mrset_destroy(struct spindle_mrset *set);
u32 spindle_mrset_reg_wrs(struct spindle_mrset *set, struct ib_reg_wr *wrs,
			  struct ib_cqe *cqe);
u32 spindle_mrset_sge(const struct spindle_mrset *set, u64 off, u32 len,
		      struct ib_sge *sge);
u32 spindle_rregion_addr(const struct spindle_rregion *rr, u64 off, u32 len,
			 u64 *addr, u32 *rkey);
void spindle_rregion_free(struct spindle_rregion *rr);

#endif /* SPINDLE_REGION_H */
