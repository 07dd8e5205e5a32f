# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Shared by the scripts run as root (bench, compare): output directories and locks that no other
# user can turn into a symlink for root to write through. The sourcing script defines die().

# ours UID: the invoking user, or the user who ran sudo.
ours()
{
	[[ $1 == "$(id -u)" || $1 == "${SUDO_UID:-none}" ]]
}

# no_others PATH: PATH (not followed) has no write bit for group or others; with "sticky", the
# sticky bit (as on /tmp) will do instead: no one can then rename or remove an entry of ours.
no_others()
{
	local m

	m=$(stat -c %a -- "$1") || return 1
	((8#$m & 8#022)) || return 0
	[[ ${2:-} == sticky ]] && ((8#$m & 8#1000))
}

# out_dir OPTION DIR: DIR, made when missing, as a physical path on stdout; one line and exit 2
# when another user could put files or symlinks in it or swap it or a directory above it for a
# symlink: DIR must be yours (root's, or the sudo user's) and writable by no one else; every
# directory above it root's or yours and writable by no one else, or sticky as /tmp is (no one
# else can then rename or remove an entry of yours); and no symlink on the way someone else's.
out_dir()
{
	local opt=$1 want=$2 abs p real u

	abs=$want
	[[ $abs == /* ]] || abs=$PWD/$abs
	# before mkdir, which must not make directories through someone else's symlink
	foreign_links "$opt" "$want" "$abs"
	mkdir -p -- "$abs" 2>/dev/null || die "$opt: cannot create '$want'"
	foreign_links "$opt" "$want" "$abs"
	real=$(cd -P -- "$abs" 2>/dev/null && pwd) || die "$opt: '$want' is not a directory"
	p=$real
	while :; do
		u=$(stat -c %u -- "$p")
		if [[ $p == "$real" ]]; then
			[[ $u == 0 ]] || ours "$u" || die "$opt: '$want' belongs to $(stat -c %U -- "$p"), not to you: that" \
				"user could plant symlinks in it for root to write through; choose another directory"
			no_others "$p" || die "$opt: '$want' is writable by group or others, who could plant symlinks in it" \
				"for root to write through; choose another directory"
		else
			[[ $u == 0 ]] || ours "$u" || die "$opt: '$want' is in $p, which belongs to $(stat -c %U -- "$p"):" \
				"that user could swap what is in it for a symlink; choose another directory"
			no_others "$p" sticky || die "$opt: '$want' is in $p, which group or others can write (no sticky bit):" \
				"they could swap what is in it for a symlink; choose another directory"
		fi
		[[ $p != / ]] || break
		p=$(dirname -- "$p")
	done
	printf '%s\n' "$real"
}

# foreign_links OPTION DIR ABS: exit 2 when a symlink on the way to ABS is someone else's.
foreign_links()
{
	local p=$3 u

	while [[ -n $p && $p != / ]]; do
		if [[ -L $p ]]; then
			u=$(stat -c %u -- "$p")
			[[ $u == 0 ]] || ours "$u" || die "$1: '$2' goes through $p, a symlink of $(stat -c %U -- "$p")'s," \
				"who could point it anywhere; choose another directory"
		fi
		p=$(dirname -- "$p")
	done
}

# root_lock NAME: one NAME at a time on this machine, by flock on /run/linerate/NAME.lock (held
# until the script exits). The directory only root can write, so no one can plant a symlink at the
# lock's name; ">>" neither truncates nor needs the file to exist.
root_lock()
{
	local dir=/run/linerate lock=/run/linerate/$1.lock

	[[ -d $dir ]] || mkdir -m 0755 "$dir" || die "cannot create $dir"
	if [[ -L $dir || $(stat -c %u -- "$dir") != 0 ]] || ! no_others "$dir"; then
		die "$dir must be a directory of root's that no one else can write"
	fi
	exec {LR_LOCK_FD}>>"$lock"
	flock -n "$LR_LOCK_FD" || die "another $1 is running (lock $lock)"
}
