/* cmd/completion.c - shell completion, made from the command tree.
 *
 * `openshell completion bash|zsh|fish` prints a small script for the
 * shell; each script hands the words typed so far to the hidden
 * `openshell __complete WORD...`, which walks the same tables the parser
 * uses and prints the candidates for the last word, one a line: commands,
 * options, an option's enumerated values, gateway names (the ones
 * `gateway list` shows) and Docker's contexts. Nothing is printed where the shell's own file
 * completion fits better.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/exitcode.h"
#include "base/log.h"
#include "base/runner.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "gateway/state/info.h"

static const char bash_script[] =
	"# bash completion for openshell: eval \"$(openshell completion bash)\"\n"
	"_openshell() {\n"
	"\tlocal IFS=$'\\n' i n=0 join=0 words=()\n"
	"\t# bash splits --opt=value at the '=' (COMP_WORDBREAKS): join it again\n"
	"\tfor ((i = 1; i <= COMP_CWORD; i++)); do\n"
	"\t\tif ((join)); then words[n-1]+=${COMP_WORDS[i]}; join=0\n"
	"\t\telif [[ ${COMP_WORDS[i]} = = && n -gt 0 && ${words[n-1]} = --* ]]; then words[n-1]+==; join=1\n"
	"\t\telse words[n++]=${COMP_WORDS[i]}; fi\n"
	"\tdone\n"
	"\tCOMPREPLY=($(openshell __complete \"${words[@]}\" 2>/dev/null))\n"
	"\t# readline replaces only what follows the '=': offer the value alone\n"
	"\t[[ ${words[n-1]} = --*=* && $COMP_WORDBREAKS = *=* ]] && COMPREPLY=(\"${COMPREPLY[@]#*=}\")\n"
	"\t# a value's prefix (\"mps:\") is not a whole word: no space after it\n"
	"\t[[ ${#COMPREPLY[@]} = 1 && ${COMPREPLY[0]} = *: ]] && compopt -o nospace 2>/dev/null\n"
	"}\n"
	"complete -o default -F _openshell openshell\n";

static const char zsh_script[] =
	"#compdef openshell\n"
	"# zsh completion for openshell: source <(openshell completion zsh), or this\n"
	"# file as _openshell on $fpath\n"
	"_openshell() {\n"
	"\tlocal -a candidates\n"
	"\tcandidates=(${(f)\"$(openshell __complete \"${(@)words[2,CURRENT]}\" 2>/dev/null)\"})\n"
	"\tcompadd -a candidates\n"
	"}\n"
	"if [ \"$funcstack[1]\" = _openshell ]; then\n"
	"\t_openshell \"$@\"\n"
	"else\n"
	"\tcompdef _openshell openshell\n"
	"fi\n";

static const char fish_script[] =
	"# fish completion for openshell: openshell completion fish | source\n"
	"complete -c openshell -f -a '(openshell __complete (commandline -opc)[2..-1] (commandline -ct))'\n";

static const char *const shells[] = { "bash", "zsh", "fish", NULL };
static const char *const scripts[] = { bash_script, zsh_script, fish_script };

/* --- the candidates ------------------------------------------------------ */

/* LEAD is what the word under the cursor has before the value: "--name="
 * for "--name=al", whose candidates are whole words again. */
static const char *lead = "";

static void offer(const char *word, const char *prefix)
{
	if (strncmp(word, prefix, strlen(prefix)) == 0)
		printf("%s%s\n", lead, word);
}

static void offer_opts(const struct cli_opt *opts, const char *prefix)
{
	for (const struct cli_opt *o = opts; o && o->name; o++) {
		cleanup_free char *word = xasprintf("--%s", o->name);
		offer(word, prefix);
	}
}

/* A shell waits on the answer: a daemon that does not answer gets this
 * long a call, not the usual minute. (A bad OPENSHELL_CALL_TIMEOUT, which
 * every command refuses, leaves what needs no docker call: the names the
 * metadata knows.) */
#define COMPLETE_CALL_MS 2000

/* The global --context typed earlier on the line: where gateway names
 * come from (node add's own --context names the node's daemon). */
static const char *typed_context;

static void offer_value(const struct cli_opt *o, const char *prefix)
{
	struct strv names = { 0 };
	os_error err = { 0 };

	if (o->value == CLI_VALUE_WORDS)
		for (const char *const *w = o->words; *w; w++)
			offer(*w, prefix);
	/* A gateway's name: what `gateway list` shows, quietly; without a
	 * Docker to ask, those the metadata knows. */
	if (o->value == CLI_VALUE_GATEWAY) {
		if (gateway_known_names(typed_context, COMPLETE_CALL_MS, &names, &err) < 0) {
			os_error_clear(&err);
			strv_free(&names);
			gateway_metadata_names(&names, &err);
			gateway_names_sort_unique(&names);
		}
		for (size_t i = 0; i < names.n; i++)
			offer(names.v[i], prefix);
	}
	if (o->value == CLI_VALUE_CONTEXT && gateway_docker_contexts(COMPLETE_CALL_MS, &names, &err) == 0)
		for (size_t i = 0; i < names.n; i++)
			offer(names.v[i], prefix);
	os_error_clear(&err);
	strv_free(&names);
}

/* The option a word names: "--name" or "-f" (NULL for "--name=x", whose
 * value is in the word). */
static const struct cli_opt *word_opt(const struct cli_spec *at, const char *word)
{
	if (strncmp(word, "--", 2) == 0)
		return strchr(word, '=') ? NULL : cli_find_opt(at, word + 2);
	for (const struct cli_opt *o = at->opts; o && o->name && word[1] && !word[2]; o++)
		if (o->key == (unsigned char)word[1])
			return o;
	return NULL;
}

/* "--name=x": the option that takes a value, and *value pointing at x. */
static const struct cli_opt *word_opt_with_value(const struct cli_spec *at, const char *word, const char **value)
{
	const char *eq = strncmp(word, "--", 2) == 0 ? strchr(word, '=') : NULL;
	cleanup_free char *name = eq ? xstrndup(word + 2, (size_t)(eq - word - 2)) : NULL;
	const struct cli_opt *o = name ? cli_find_opt(at, name) : NULL;

	*value = eq ? eq + 1 : NULL;
	return o && o->arg ? o : NULL;
}

/* words: what follows "openshell" on the command line, the last being the
 * word under the cursor (maybe empty). */
static void complete(int n, char **words)
{
	const struct cli_spec *at = cli_root();
	const struct cli_opt *pending = NULL;   /* an option waiting for its value */
	int pending_global = 0;                 /* and it is the command line's own */
	const char *cur = words[n - 1];
	int operands = 0;                       /* of the command reached */

	for (int i = 0; i < n - 1; i++) {
		const struct cli_spec *next;

		if (pending) {
			/* this word was its value */
			if (pending->value == CLI_VALUE_CONTEXT && pending_global)
				typed_context = words[i];
			pending = NULL;
		} else if (strcmp(words[i], "--") == 0) {
			return;   /* the rest is a command line of its own */
		} else if (words[i][0] == '-') {
			const struct cli_opt *o = word_opt(at, words[i]);
			const char *value;

			pending = o && o->arg ? o : NULL;
			pending_global = at == cli_root();
			o = word_opt_with_value(at, words[i], &value);
			if (o && o->value == CLI_VALUE_CONTEXT && at == cli_root())
				typed_context = value;
		} else if (at->subs && (next = cli_find(at, words[i])) && next != &cli_help_spec && !next->hidden) {
			at = next;
		} else {
			operands++;
		}
	}
	const char *value;
	const struct cli_opt *inline_opt = word_opt_with_value(at, cur, &value);

	if (pending) {
		offer_value(pending, cur);
	} else if (inline_opt) {
		cleanup_free char *before = xstrndup(cur, (size_t)(value - cur));
		lead = before;
		offer_value(inline_opt, value);
		lead = "";
	} else if (cur[0] == '-') {
		offer_opts(at->opts, cur);
		offer_opts(cli_common_opts, cur);
	} else if (at->operand_words && operands == 0) {
		for (const char *const *w = at->operand_words; *w; w++)
			offer(*w, cur);
	} else {
		for (const struct cli_spec *const *s = at->subs; s && *s; s++)
			if (!(*s)->hidden)
				offer((*s)->name, cur);
	}
}

static int run_complete(int argc, char **argv)
{
	/* No options of its own: the words may be anything the user typed. */
	log_set_verbosity(-1);
	if (argc > 1)
		complete(argc - 1, argv + 1);
	return OS_EXIT_OK;
}

const struct cli_spec complete_spec = {
	.name = "__complete",
	.summary = "the candidates for a command line's last word (for the completion scripts)",
	.run = run_complete,
	.hidden = 1,
};

/* --- the scripts ----------------------------------------------------------- */

static int run_completion(int argc, char **argv)
{
	struct cli_parser p = { .spec = &completion_spec };

	if (cli_next_option(&p, argc, argv) != -1)
		return OS_EXIT_USAGE;   /* no options of its own */
	if (p.done >= 0)
		return p.done;
	if (optind != argc - 1)
		return log_usage_error("completion", optind >= argc ? "name a shell: bash, zsh or fish"
							      : "too many arguments; name one shell");
	for (int i = 0; shells[i]; i++)
		if (strcmp(argv[optind], shells[i]) == 0) {
			fputs(scripts[i], stdout);
			return OS_EXIT_OK;
		}
	cleanup_free char *shown = printable(argv[optind], 32);
	return log_usage_error("completion", "unknown shell '%s': give bash, zsh or fish", shown);
}

const struct cli_spec completion_spec = {
	.name = "completion",
	.summary = "print the shell completion script for bash, zsh or fish",
	.operands = "bash|zsh|fish",
	.operand_words = shells,
	.about = "Print a script that makes SHELL complete openshell's commands, options,\n"
		 "their values, gateway names and Docker contexts. To load it now:\n"
		 "  bash:  eval \"$(openshell completion bash)\"\n"
		 "  zsh:   source <(openshell completion zsh)\n"
		 "  fish:  openshell completion fish | source\n"
		 "'make install' puts the scripts where each shell looks for them.\n",
	.run = run_completion,
};
