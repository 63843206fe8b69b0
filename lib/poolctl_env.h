/* poolctl env: a held job folder for a batch job, and the shell lines that point the job's
 * temporary files into it (docs/interface.md, "poolctl env"; docs/cluster.md). poolctl.c only
 * registers it. */
#ifndef POOLFS_POOLCTL_ENV_H
#define POOLFS_POOLCTL_ENV_H

#define POOLCTL_ENV_SYNOPSIS "env [--session|--pin|--cgroup|--pid N] [POOL]"

#define POOLCTL_ENV_HELP                                                                                \
	"Create a job folder in POOL (default: $POOLFS_POOL, else /pool), named job-<SLURM_JOB_ID>-\n"  \
	"<uuid> when SLURM_JOB_ID is set (job-<uuid> otherwise), hold it, and print shell lines that\n" \
	"export POOLFS_JOB, JOBLIB_TEMP_FOLDER and TMPDIR pointing to it. In a job script:\n"           \
	"    eval \"$(poolctl env)\"\n"                                                                 \
	"The hold's scope is --session by default: in a Slurm batch script or srun step that is the\n"  \
	"step's slurmstepd, so the folder and everything in it go when the job (step) ends, also\n"     \
	"when it is cancelled, hits its time limit or slurmstepd is killed. Other scopes:\n"            \
	"  --pin      until 'poolctl release' (e.g. an input kept for later jobs)\n"                    \
	"  --cgroup   until the caller's cgroup v2 group has no process left\n"                         \
	"  --pid N    until process N exits (e.g. --pid $PPID under salloc)\n"

/* Run "poolctl env" with argv[0] == "env". Returns the exit status (0, 1 failed, 2 usage). */
int poolctl_env(int argc, char **argv);

#endif
