// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for group configuration validation (kmod/proto/config.c) and
 * the words for its error codes (kmod/proto/cfg_err.h): each bad field is
 * named by the uapi code and index userspace gets back, and every uapi
 * code has words that the kernel log and libspindle print.
 */
#include <sys/socket.h>

#include "../../kmod/proto/config.h"
#include "../ktap.h"

/* Two members on 10.0.0.1/2:7000, one ordered subgroup of both. */
static void good_cfg(struct sp_group_cfg *c)
{
	u32 i;

	memset(c, 0, sizeof(*c));
	c->group_id = 9;
	c->self_id = 1;
	c->nmembers = 2;
	for (i = 0; i < 2; i++) {
		c->members[i].id = i;
		c->members[i].family = AF_INET;
		c->members[i].port = 7000;
		c->members[i].addr[0] = 10;
		c->members[i].addr[3] = 1 + i;
	}
	c->nsubgroups = 1;
	c->subgroups[0].window = 8;
	c->subgroups[0].max_msg = 64;
	c->subgroups[0].mode = SP_MODE_ORDERED;
	c->subgroups[0].nmembers = 2;
	c->subgroups[0].nsenders = 2;
	for (i = 0; i < 2; i++) {
		c->subgroups[0].members[i] = i;
		c->subgroups[0].senders[i] = i;
	}
}

/* @c must be refused naming @field at @index. */
static int refused(const struct sp_group_cfg *c, enum spindle_cfg_err field, u32 index)
{
	struct sp_cfg_err err;

	if (sp_cfg_validate(c, &err) != -EINVAL) {
		TH_LOG("accepted; expected %s", sp_cfg_err_name(field));
		return 0;
	}
	if (err.field != field || err.index != index) {
		TH_LOG("refused with %s at %u; expected %s at %u",
		       sp_cfg_err_name(err.field), err.index, sp_cfg_err_name(field), index);
		return 0;
	}
	return 1;
}

TEST(good_config_is_accepted)
{
	struct sp_group_cfg c;
	struct sp_cfg_err err;

	good_cfg(&c);
	EXPECT_EQ(sp_cfg_validate(&c, &err), 0);
	EXPECT_EQ(err.field, SPINDLE_CFG_OK);
}

TEST(each_bad_field_is_named_with_its_uapi_code)
{
	struct sp_group_cfg c;

	good_cfg(&c);
	c.group_id = 0;
	EXPECT_TRUE(refused(&c, SPINDLE_CFG_E_GROUP_ID, 0));
	good_cfg(&c);
	c.flags = 0x80;
	EXPECT_TRUE(refused(&c, SPINDLE_CFG_E_GROUP_FLAGS, 0));
	good_cfg(&c);
	c.nmembers = SPINDLE_MAX_MEMBERS + 1;
	EXPECT_TRUE(refused(&c, SPINDLE_CFG_E_NMEMBERS, 0));
	good_cfg(&c);
	c.members[1].id = 0;
	EXPECT_TRUE(refused(&c, SPINDLE_CFG_E_MEMBER_ID_DUP, 1));
	good_cfg(&c);
	c.members[1].addr[3] = 1;
	EXPECT_TRUE(refused(&c, SPINDLE_CFG_E_MEMBER_ADDR_DUP, 1));
	good_cfg(&c);
	c.members[1].addr[0] = 224;
	EXPECT_TRUE(refused(&c, SPINDLE_CFG_E_MEMBER_ADDR, 1));
	good_cfg(&c);
	c.members[0].port = 0;
	EXPECT_TRUE(refused(&c, SPINDLE_CFG_E_MEMBER_PORT, 0));
	good_cfg(&c);
	c.members[1].family = 99;
	EXPECT_TRUE(refused(&c, SPINDLE_CFG_E_MEMBER_FAMILY, 1));
	good_cfg(&c);
	c.self_id = 5;
	EXPECT_TRUE(refused(&c, SPINDLE_CFG_E_SELF, 0));
	good_cfg(&c);
	c.nsubgroups = 0;
	EXPECT_TRUE(refused(&c, SPINDLE_CFG_E_NSUBGROUPS, 0));
	good_cfg(&c);
	c.nsubgroups = 2;
	c.subgroups[1] = c.subgroups[0];
	EXPECT_TRUE(refused(&c, SPINDLE_CFG_E_SG_ID_DUP, 1));
	good_cfg(&c);
	c.subgroups[0].mode = 3;
	EXPECT_TRUE(refused(&c, SPINDLE_CFG_E_SG_MODE, 0));
	good_cfg(&c);
	c.subgroups[0].window = SPINDLE_MAX_WINDOW + 1;
	EXPECT_TRUE(refused(&c, SPINDLE_CFG_E_SG_WINDOW, 0));
	good_cfg(&c);
	c.subgroups[0].max_msg = SPINDLE_MAX_MSG + 1;
	EXPECT_TRUE(refused(&c, SPINDLE_CFG_E_SG_MAX_MSG, 0));
	good_cfg(&c);
	c.subgroups[0].window = SPINDLE_MAX_WINDOW;
	c.subgroups[0].max_msg = SPINDLE_MAX_MSG;
	EXPECT_TRUE(refused(&c, SPINDLE_CFG_E_SG_RING_SIZE, 0));
	good_cfg(&c);
	c.subgroups[0].nmembers = 3;
	EXPECT_TRUE(refused(&c, SPINDLE_CFG_E_SG_NMEMBERS, 0));
	good_cfg(&c);
	c.subgroups[0].members[1] = 0;
	EXPECT_TRUE(refused(&c, SPINDLE_CFG_E_SG_MEMBER, 0));
	good_cfg(&c);
	c.subgroups[0].nsenders = 0;
	EXPECT_TRUE(refused(&c, SPINDLE_CFG_E_SG_NSENDERS, 0));
	good_cfg(&c);
	c.subgroups[0].nmembers = 1;
	c.subgroups[0].nsenders = 1;
	c.subgroups[0].senders[0] = 1;
	EXPECT_TRUE(refused(&c, SPINDLE_CFG_E_SG_SENDER, 0));
}

TEST(a_block_device_needs_order_room_for_a_sector_and_a_bounded_size)
{
	struct sp_group_cfg c;
	struct sp_cfg_err err;

	good_cfg(&c);
	c.subgroups[0].max_msg = SPINDLE_BLK_MIN_MSG;
	c.subgroups[0].blk_mib = SPINDLE_MAX_BLK_MIB;
	EXPECT_EQ(sp_cfg_validate(&c, &err), 0);
	c.subgroups[0].blk_mib = SPINDLE_MAX_BLK_MIB + 1;
	EXPECT_TRUE(refused(&c, SPINDLE_CFG_E_SG_BLK, 0));
	c.subgroups[0].blk_mib = 16;
	c.subgroups[0].max_msg = SPINDLE_BLK_MIN_MSG - 1;
	EXPECT_TRUE(refused(&c, SPINDLE_CFG_E_SG_BLK, 0));
	c.subgroups[0].max_msg = SPINDLE_BLK_MIN_MSG;
	c.subgroups[0].mode = SP_MODE_UNORDERED;
	EXPECT_TRUE(refused(&c, SPINDLE_CFG_E_SG_BLK, 0));
	/* no device: max_msg and mode are free, as before */
	c.subgroups[0].blk_mib = 0;
	c.subgroups[0].max_msg = 64;
	EXPECT_EQ(sp_cfg_validate(&c, &err), 0);
}

TEST(every_uapi_code_has_words)
{
	u32 f;

	/* SPINDLE_CFG_E_SG_BLK is the last code of the uapi enum */
	for (f = SPINDLE_CFG_OK; f <= SPINDLE_CFG_E_SG_BLK; f++) {
		const char *name = sp_cfg_err_name(f);

		ASSERT_TRUE(name != NULL);
		EXPECT_TRUE(strcmp(name, "unknown field") != 0);
		EXPECT_GT(strlen(name), 1);
	}
	EXPECT_TRUE(!strcmp(sp_cfg_err_name(SPINDLE_CFG_E_SG_BLK + 1), "unknown field"));
	EXPECT_TRUE(!strcmp(sp_cfg_err_name(~0U), "unknown field"));
}
