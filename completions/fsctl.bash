# SPDX-License-Identifier: GPL-2.0-only
# bash completion for fsctl: commands and subcommands as `fsctl --help` and
# `fsctl CMD --help` list them, their options, the global options (accepted
# before or after the command), and file names for the devices. Installed as
# ${datadir}/bash-completion/completions/fsctl (cmake/install.cmake).

_fsctl() {
  local cur prev words cword
  if declare -F _init_completion > /dev/null; then
    _init_completion || return
  else
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
  fi

  local global_opts="--format -v --verbose -q --quiet --progress --progress-interval --cache-size --help -h --version"
  local commands="inspect qgroup quota convert check balance rescue"

  # Values of options that take one. bash splits "--format=json" at "=":
  # the option is then two words back.
  local opt=$prev
  if [ "$prev" = "=" ] && ((cword >= 2)); then
    opt=${words[cword - 2]}
  elif [ "$cur" = "=" ]; then
    opt=$prev
    cur=""
  fi
  case $opt in
    --format)
      COMPREPLY=($(compgen -W "text json" -- "$cur"))
      return ;;
    --cache-size)
      COMPREPLY=($(compgen -W "64M 256M 1G 4G" -- "$cur"))
      return ;;
    --batch | --progress-interval)
      return ;;
    --verify-qgroups)
      COMPREPLY=($(compgen -W "auto yes no" -- "$cur"))
      return ;;
    --sort)
      COMPREPLY=($(compgen -W "qgroupid rfer excl max_rfer max_excl -qgroupid -rfer -excl -max_rfer -max_excl" -- "$cur"))
      return ;;
    -t | --tree)
      COMPREPLY=($(compgen -W "root extent chunk dev fs csum quota uuid free-space block-group data-reloc" -- "$cur"))
      return ;;
    -b | --block)
      return ;;
  esac

  # The command and subcommand typed so far (skipping options and their values).
  local cmd="" sub="" i w
  for ((i = 1; i < cword; i++)); do
    w=${words[i]}
    case $w in
      --format | --cache-size | --progress-interval | --batch | --verify-qgroups | --sort | -t | --tree | -b | --block)
        # Its value follows, after an "=" word when written --opt=value.
        if [ "${words[i + 1]:-}" = "=" ]; then ((i += 2)); else ((i++)); fi
        continue ;;
      -*) continue ;;
    esac
    if [ -z "$cmd" ]; then
      cmd=$w
    elif [ -z "$sub" ] && { [ "$cmd" = inspect ] || [ "$cmd" = qgroup ] || [ "$cmd" = quota ] || [ "$cmd" = rescue ] || { [ "$cmd" = balance ] && { [ "$w" = cancel ] || [ "$w" = status ]; }; }; }; then
      sub=$w
    fi
  done

  local opts="" subs="" devices=1
  case $cmd in
    "")
      subs=$commands; devices=0 ;;
    inspect)
      case $sub in
        "") subs="dump-super dump-tree tree-stats block-groups usage"; devices=0 ;;
        dump-super) opts="-a --all-mirrors" ;;
        dump-tree) opts="-t --tree -b --block" ;;
        tree-stats | block-groups | usage) ;;
      esac ;;
    qgroup)
      case $sub in
        "") subs="show verify"; devices=0 ;;
        show) opts="--raw --sort" ;;
        verify) opts="--repair -p" ;;
      esac ;;
    quota)
      case $sub in
        "") subs="disable enable"; devices=0 ;;
        disable | enable) opts="-n --dry-run" ;;
      esac ;;
    rescue)
      case $sub in
        "") subs="finish-drop"; devices=0 ;;
        finish-drop) opts="-n --dry-run --batch -p" ;;
      esac ;;
    convert) opts="--bg-tree --no-bg-tree -n --dry-run --batch -p" ;;
    check) ;;
    balance)
      if [ "$sub" = cancel ]; then
        opts="-n --dry-run --batch"
      elif [ "$sub" = status ]; then
        opts=""
      else
        opts="-m --metadata -s --system -f --force -n --dry-run -p --batch --verify-qgroups"
        [ "$cword" -eq 2 ] && [[ $cur != -* ]] && subs="cancel start status"
      fi
      # Filters attached to -m/-s, as in btrfs balance: -musage=50,limit=2.
      if [[ $cur == -m* || $cur == -s* ]] && [[ $cur != --* ]] && [ ${#cur} -gt 2 ]; then
        local flag=${cur:0:2} filters="usage= limit= devid= drange= vrange= stripes= profiles= convert= soft" f out=()
        for f in $filters; do out+=("$flag$f"); done
        COMPREPLY=($(compgen -W "${out[*]}" -- "$cur"))
        compopt -o nospace 2> /dev/null
        return
      fi ;;
  esac

  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$opts $global_opts" -- "$cur"))
  elif [ -n "$subs" ]; then
    COMPREPLY=($(compgen -W "$subs" -- "$cur"))
  elif ((devices)); then
    # Devices: block devices or image files.
    COMPREPLY=($(compgen -f -- "$cur"))
    compopt -o filenames 2> /dev/null
  fi
  return 0
}
complete -F _fsctl fsctl
