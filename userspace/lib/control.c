// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* libspindle: /dev/spindle_ctl (group up, down, state) and finding a subgroup's device. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "libspindle.h"
#include "lib.h"

int spindle_ctl_open(void)
{
	int fd = open(SPINDLE_CTL_DEVICE, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/**
 * spindle_up - bring a group up on this node
 * @ctl: from spindle_ctl_open()
 * @cfg: configuration
 * @self_id: out (may be NULL): the member id this node took
 * @err: out: the field the kernel rejected, in words
 * @errlen: size of @err
 */
int spindle_up(int ctl, const struct spindle_cfg *cfg, uint32_t *self_id,
	       char *err, size_t errlen)
{
	struct spindle_subgroup_cfg sgs[SPINDLE_MAX_SUBGROUPS];
	struct spindle_ctl_up up;
	uint32_t s;

	memset(&up, 0, sizeof(up));
	memset(sgs, 0, sizeof(sgs));
	up.size = sizeof(up);
	up.group_id = cfg->group_id;
	up.flags = cfg->flags;
	up.self_id = cfg->self_id;
	up.nmembers = cfg->nmembers;
	up.nsubgroups = cfg->nsubgroups;
	up.members = (uintptr_t)cfg->members;
	up.subgroups = (uintptr_t)sgs;
	for (s = 0; s < cfg->nsubgroups && s < SPINDLE_MAX_SUBGROUPS; s++) {
		sgs[s].id = cfg->subgroups[s].id;
		sgs[s].window = cfg->subgroups[s].window;
		sgs[s].max_msg = cfg->subgroups[s].max_msg;
		sgs[s].mode = cfg->subgroups[s].mode;
		sgs[s].nmembers = cfg->subgroups[s].nmembers;
		sgs[s].nsenders = cfg->subgroups[s].nsenders;
		sgs[s].blk_mib = cfg->subgroups[s].blk_mib;
		sgs[s].members = (uintptr_t)cfg->subgroups[s].members;
		sgs[s].senders = (uintptr_t)cfg->subgroups[s].senders;
	}
	if (ioctl(ctl, SPINDLE_CTL_UP, &up) < 0) {
		int e = errno;

		if ((up.err_field >= SPINDLE_CFG_E_SG_ID_DUP &&
		     up.err_field <= SPINDLE_CFG_E_SG_SENDER) ||
		    up.err_field == SPINDLE_CFG_E_SG_BLK)
			libspindle_fail(err, errlen, "group %u: %s: subgroup %u (id %u): %s", cfg->group_id,
			     strerror(e), up.err_index,
			     up.err_index < cfg->nsubgroups ? cfg->subgroups[up.err_index].id : 0,
			     spindle_cfg_err_name(up.err_field));
		else if (up.err_field >= SPINDLE_CFG_E_MEMBER_ID_DUP &&
			 up.err_field <= SPINDLE_CFG_E_MEMBER_ADDR_DUP)
			libspindle_fail(err, errlen, "group %u: %s: member %u (id %u): %s", cfg->group_id,
			     strerror(e), up.err_index,
			     up.err_index < cfg->nmembers ? cfg->members[up.err_index].id : 0,
			     spindle_cfg_err_name(up.err_field));
		else if (up.err_field)
			libspindle_fail(err, errlen, "group %u: %s: %s", cfg->group_id, strerror(e),
			     spindle_cfg_err_name(up.err_field));
		else
			libspindle_fail(err, errlen, "group %u: %s", cfg->group_id, strerror(e));
		return -e;
	}
	if (self_id)
		*self_id = up.self_id_out;
	return 0;
}

int spindle_down(int ctl, uint32_t group_id, uint32_t timeout_ms)
{
	struct spindle_ctl_down d = {
		.size = sizeof(d), .group_id = group_id, .timeout_ms = timeout_ms,
	};

	return ioctl(ctl, SPINDLE_CTL_DOWN, &d) < 0 ? -errno : 0;
}

int spindle_group_info(int ctl, uint32_t group_id, uint32_t index,
		       struct spindle_group_status *st)
{
	memset(st, 0, sizeof(*st));
	st->info.size = sizeof(st->info);
	st->info.group_id = group_id;
	st->info.index = index;
	st->info.nmembers = SPINDLE_MAX_MEMBERS;
	st->info.nsubgroups = SPINDLE_MAX_SUBGROUPS;
	st->info.member_info_size = sizeof(st->members[0]);
	st->info.subgroup_info_size = sizeof(st->subgroups[0]);
	st->info.members = (uintptr_t)st->members;
	st->info.subgroups = (uintptr_t)st->subgroups;
	return ioctl(ctl, SPINDLE_CTL_GROUP_INFO, &st->info) < 0 ? -errno : 0;
}

const char *spindle_group_state_name(uint32_t state)
{
	switch (state) {
	case SPINDLE_GROUP_CONNECTING: return "connecting";
	case SPINDLE_GROUP_ACTIVE: return "active";
	case SPINDLE_GROUP_FAILED: return "failed";
	case SPINDLE_GROUP_DOWN: return "down";
	case SPINDLE_GROUP_VIEW_CHANGE: return "view-change";
	default: return "unknown";
	}
}

const char *spindle_peer_state_name(uint32_t state)
{
	switch (state) {
	case SPINDLE_PEER_SELF: return "self";
	case SPINDLE_PEER_IDLE: return "idle";
	case SPINDLE_PEER_CONNECTING: return "connecting";
	case SPINDLE_PEER_CONNECTED: return "connected";
	case SPINDLE_PEER_READY: return "ready";
	case SPINDLE_PEER_FAILED: return "failed";
	default: return "unknown";
	}
}

static int read_sysfs_u32(const char *dir, const char *name, uint32_t *v)
{
	char path[512], buf[32];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/sys/class/spindle/%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return ok ? libspindle_parse_u32(buf, v) : -1;
}

int spindle_find_device(uint32_t group_id, uint32_t subgroup_id,
			char *path, size_t len)
{
	DIR *d = opendir("/sys/class/spindle");
	struct dirent *e;
	int ret = -ENOENT;

	if (!d)
		return -ENOENT;
	while ((e = readdir(d))) {
		uint32_t g, s;

		if (strncmp(e->d_name, "spindle", 7) ||
		    read_sysfs_u32(e->d_name, "group_id", &g) ||
		    read_sysfs_u32(e->d_name, "subgroup_id", &s))
			continue;
		if (g == group_id && s == subgroup_id) {
			snprintf(path, len, "/dev/%s", e->d_name);
			ret = 0;
			break;
		}
	}
	closedir(d);
	return ret;
}
