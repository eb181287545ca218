def extract_hashtags(text):
    tags = []
    for word in text.split():
        if word.startswith("#") and len(word) > 2:
            tags.append(word[1:].lower())
    return tags
