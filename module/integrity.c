// SPDX-License-Identifier: GPL-2.0
/*
 * dio_batch: protection information carried by requests.
 *
 * Not implemented yet: a request that asks for PI is refused with
 * -EOPNOTSUPP, and DIO_IOC_FEATURES does not announce DIO_FEAT_PI.
 */
#include "dio_batch.h"

/**
 * dio_pi_check_request - can @h honour the PI fields of @r?
 * @h: the request's handle
 * @r: the request
 *
 * Return: 0, or -EOPNOTSUPP for PI this module or device cannot honour.
 */
int dio_pi_check_request(struct dio_handle *h, const struct dio_request *r)
{
	if ((r->flags & DIO_REQ_PI) || r->pi_flags || r->pi_buf || r->pi_len ||
	    r->app_tag || r->app_tag_mask)
		return -EOPNOTSUPP;
	return 0;
}

/**
 * dio_pi_prepare - pin a request's PI buffer
 * @kreq: the request
 *
 * Return: 0 or -errno.
 */
int dio_pi_prepare(struct dio_kreq *kreq)
{
	return 0;
}

/**
 * dio_pi_attach - give a bio its slice of the request's PI
 * @kreq: the request
 * @bio: one of its bios, pages added, not yet submitted
 *
 * Return: 0 or -errno.
 */
int dio_pi_attach(struct dio_kreq *kreq, struct bio *bio)
{
	return 0;
}

/**
 * dio_pi_finish - verify and report PI of a completed request
 * @kreq: the request, before its pages are released
 */
void dio_pi_finish(struct dio_kreq *kreq)
{
}

/**
 * dio_pi_free - release a request's PI pages
 * @kreq: the request
 */
void dio_pi_free(struct dio_kreq *kreq)
{
}

/**
 * dio_pi_module_init - nothing to set up yet
 *
 * Return: 0.
 */
int dio_pi_module_init(void)
{
	return 0;
}

/**
 * dio_pi_module_exit - nothing to tear down yet
 */
void dio_pi_module_exit(void)
{
}
