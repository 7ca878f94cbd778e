// SPDX-License-Identifier: GPL-2.0
/*
 * Memory that RDMA writes come from or go into.
 *
 * A region is vmalloc_user() memory: zeroed, page-aligned, and mappable
 * into a process with remap_vmalloc_range().  For the NIC it is DMA-mapped
 * in chunks of at most the device's fast-registration page list length,
 * and every user of it gets its own set of FRWR MRs, one per chunk: local
 * ones to write from, and remote-writable ones whose rkeys go to exactly one
 * peer.  There is no global rkey anywhere.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/vmalloc.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/dma-mapping.h>

#include "region.h"

/**
 * spindle_region_alloc - allocate zeroed, mappable memory
 * @size: bytes, rounded up to whole pages
 *
 * Return: the region with one reference, or NULL.
 */
struct spindle_region *spindle_region_alloc(size_t size)
{
	struct spindle_region *reg;

	reg = kzalloc(sizeof(*reg), GFP_KERNEL);
	if (!reg)
		return NULL;
	reg->size = PAGE_ALIGN(size);
	reg->vaddr = vmalloc_user(reg->size);
	if (!reg->vaddr) {
		kfree(reg);
		return NULL;
	}
	kref_init(&reg->ref);
	return reg;
}

static void spindle_region_release(struct kref *ref)
{
	struct spindle_region *reg = container_of(ref, struct spindle_region, ref);

	spindle_region_dma_unmap(reg);
	vfree(reg->vaddr);
	kfree(reg);
}

void spindle_region_put(struct spindle_region *reg)
{
	if (reg)
		kref_put(&reg->ref, spindle_region_release);
}

/*
 * Peers write into regions with one-sided RDMA writes that no completion
 * announces, and the CPU polls them: that needs DMA the CPU sees without
 * syncs.  A device whose mapping of the region would need them (no cache
 * coherence, or bounce buffers: swiotlb) cannot run Spindle.  Soft-RoCE
 * bypasses the DMA API and never needs them.
 */
static bool spindle_region_needs_sync(struct ib_device *ibdev, struct sg_table *sgt)
{
	struct scatterlist *sg;
	int i;

	if (ib_uses_virt_dma(ibdev))
		return false;
	for_each_sgtable_dma_sg(sgt, sg, i) {
		if (dma_need_sync(ibdev->dma_device, sg_dma_address(sg))) {
			pr_warn_ratelimited("%s: DMA to its memory needs syncs (not coherent, or bounce-buffered): one-sided writes cannot be polled\n",
					    dev_name(&ibdev->dev));
			return true;
		}
	}
	return false;
}

/**
 * spindle_region_dma_map - DMA-map a region for @ibdev in chunks
 * @reg: region, not yet mapped
 * @ibdev: device
 * @max_pages: pages one MR can map
 *
 * Return: 0 or -errno.
 */
int spindle_region_dma_map(struct spindle_region *reg, struct ib_device *ibdev,
			   u32 max_pages)
{
	u32 npages = reg->size >> PAGE_SHIFT;
	u32 per = min(npages, max_pages);
	struct page **pages;
	u32 c, i;
	int ret = -ENOMEM;

	if (!per)
		return -EINVAL;
	pages = kvmalloc_array(per, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	reg->nchunks = DIV_ROUND_UP(npages, per);
	reg->chunk_bytes = per << PAGE_SHIFT;
	reg->sgts = kcalloc(reg->nchunks, sizeof(*reg->sgts), GFP_KERNEL);
	if (!reg->sgts)
		goto out;
	reg->ibdev = ibdev;
	for (c = 0; c < reg->nchunks; c++) {
		u32 first = c * per, n = min(per, npages - first);
		struct sg_table *sgt = &reg->sgts[c];
		int nents;

		for (i = 0; i < n; i++)
			pages[i] = vmalloc_to_page(reg->vaddr +
						   ((size_t)(first + i) << PAGE_SHIFT));
		ret = sg_alloc_table_from_pages(sgt, pages, n, 0,
						(size_t)n << PAGE_SHIFT, GFP_KERNEL);
		if (ret)
			goto fail;
		nents = ib_dma_map_sg(ibdev, sgt->sgl, sgt->orig_nents,
				      DMA_BIDIRECTIONAL);
		if (!nents) {
			sg_free_table(sgt);
			ret = -EIO;
			goto fail;
		}
		sgt->nents = nents;
		if (spindle_region_needs_sync(ibdev, sgt)) {
			c++;	/* this chunk is mapped: unmapped with the others */
			ret = -EOPNOTSUPP;
			goto fail;
		}
	}
	ret = 0;
	goto out;
fail:
	reg->nchunks = c;
	spindle_region_dma_unmap(reg);
out:
	kvfree(pages);
	return ret;
}

void spindle_region_dma_unmap(struct spindle_region *reg)
{
	u32 c;

	if (!reg->ibdev)
		return;
	for (c = 0; c < reg->nchunks; c++) {
		struct sg_table *sgt = &reg->sgts[c];

		ib_dma_unmap_sg(reg->ibdev, sgt->sgl, sgt->orig_nents,
				DMA_BIDIRECTIONAL);
		sg_free_table(sgt);
	}
	kfree(reg->sgts);
	reg->sgts = NULL;
	reg->nchunks = 0;
	reg->ibdev = NULL;
}

/**
 * spindle_mrset_init - allocate and map one FRWR MR per chunk of a region
 * @set: zeroed
 * @reg: a DMA-mapped region
 * @pd: protection domain
 * @access: IB_ACCESS_* for the registration
 *
 * The MRs are valid once the IB_WR_REG_MR requests from
 * spindle_mrset_reg_wrs() have executed on a QP.
 * Return: 0 or -errno.
 */
int spindle_mrset_init(struct spindle_mrset *set, struct spindle_region *reg,
		       struct ib_pd *pd, int access)
{
	u32 c;

	set->mrs = kcalloc(reg->nchunks, sizeof(*set->mrs), GFP_KERNEL);
	if (!set->mrs)
		return -ENOMEM;
	set->reg = reg;
	set->access = access;
	for (c = 0; c < reg->nchunks; c++) {
		struct sg_table *sgt = &reg->sgts[c];
		u32 pages = reg->chunk_bytes >> PAGE_SHIFT;
		struct ib_mr *mr;
		int n;

		mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, pages);
		if (IS_ERR(mr)) {
			spindle_mrset_destroy(set);
			return PTR_ERR(mr);
		}
		set->mrs[c] = mr;
		set->n = c + 1;
		n = ib_map_mr_sg(mr, sgt->sgl, sgt->nents, NULL, PAGE_SIZE);
		if (n != sgt->nents) {
			spindle_mrset_destroy(set);
			return n < 0 ? n : -EINVAL;
		}
		/*
		 * The iova is what the peer writes to, and ib_map_mr_sg() made
		 * it the DMA address, which on soft-RoCE is a kernel virtual
		 * address: give each chunk an address of its own, page-aligned
		 * as the mapping is, that says nothing about this kernel.
		 */
		mr->iova = (u64)(c + 1) << 32;
		ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	}
	return 0;
}

void spindle_mrset_destroy(struct spindle_mrset *set)
{
	u32 c;

	for (c = 0; c < set->n; c++)
		ib_dereg_mr(set->mrs[c]);
	kfree(set->mrs);
	memset(set, 0, sizeof(*set));
}

/**
 * spindle_mrset_reg_wrs - the registration requests for a set, unchained
 * @set: the MRs
 * @wrs: room for set->n requests
 * @cqe: completion entry (the requests are unsignaled: only errors complete)
 *
 * Return: number of requests written.
 */
u32 spindle_mrset_reg_wrs(struct spindle_mrset *set, struct ib_reg_wr *wrs,
			  struct ib_cqe *cqe)
{
	u32 c;

	for (c = 0; c < set->n; c++) {
		memset(&wrs[c], 0, sizeof(wrs[c]));
		wrs[c].wr.opcode = IB_WR_REG_MR;
		wrs[c].wr.wr_cqe = cqe;
		wrs[c].mr = set->mrs[c];
		wrs[c].key = set->mrs[c]->rkey;
		wrs[c].access = set->access;
	}
	return set->n;
}

/**
 * spindle_mrset_sge - local SGE for bytes [@off, @off + @len) of the region
 * @set: local MRs over the region
 * @off: offset in the region
 * @len: bytes wanted
 * @sge: out
 *
 * Return: bytes the SGE covers (less than @len at a chunk boundary), or 0
 * if @off is outside the region.
 */
u32 spindle_mrset_sge(const struct spindle_mrset *set, u64 off, u32 len,
		      struct ib_sge *sge)
{
	const struct spindle_region *reg = set->reg;
	u32 c, within, n;

	if (off >= reg->size)
		return 0;
	c = div_u64_rem(off, reg->chunk_bytes, &within);
	if (c >= set->n)
		return 0;
	n = min_t(u64, len, min_t(u64, reg->chunk_bytes - within, reg->size - off));
	sge->addr = set->mrs[c]->iova + within;
	sge->length = n;
	sge->lkey = set->mrs[c]->lkey;
	return n;
}

/**
 * spindle_rregion_addr - remote address for bytes [@off, @off + @len)
 * @rr: what the peer advertised
 * @off: offset in the region
 * @len: bytes wanted
 * @addr: out: remote address
 * @rkey: out: its key
 *
 * Return: bytes covered (less than @len at a chunk boundary), or 0 if
 * @off is outside the region.
 */
u32 spindle_rregion_addr(const struct spindle_rregion *rr, u64 off, u32 len,
			 u64 *addr, u32 *rkey)
{
	u64 base = 0;
	u32 c;

	for (c = 0; c < rr->n; c++) {
		const struct spindle_rchunk *ch = &rr->chunks[c];

		if (off < base + ch->len) {
			u64 within = off - base;

			*addr = ch->iova + within;
			*rkey = ch->rkey;
			return min_t(u64, len, ch->len - within);
		}
		base += ch->len;
	}
	return 0;
}

void spindle_rregion_free(struct spindle_rregion *rr)
{
	kfree(rr->chunks);
	memset(rr, 0, sizeof(*rr));
}
